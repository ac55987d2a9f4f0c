#!/usr/bin/env bash
# Provision (fetch/build, cached in $TREERAG_CACHE) and start Kafka + FerretDB on loopback.
#   scripts/infra/up.sh
#   TREERAG_KAFKA_PORT=19092 TREERAG_MONGO_PORT=37017 scripts/infra/up.sh   # a second, separate pair
# Set PYTHON to a python with aiokafka/pymongo for protocol-level readiness checks.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
INFRA_NAME=up

# Provision both first (in parallel: the first FerretDB build takes minutes), then start.
"$here/ferretdb.sh" build &
fpid=$!
"$here/kafka.sh" fetch || { wait "$fpid" || true; die "Kafka fetch failed (see above)"; }
wait "$fpid" || die "FerretDB build failed (see above)"

"$here/kafka.sh" start
"$here/ferretdb.sh" start || { "$here/kafka.sh" stop || true; die "FerretDB failed to start; Kafka stopped again"; }

kport="${TREERAG_KAFKA_PORT:-9092}" mport="${TREERAG_MONGO_PORT:-27017}"
cat >&2 <<MSG
[up] ready:
  KAFKA_BOOTSTRAP=127.0.0.1:$kport   log: $TREERAG_RUN/kafka-$kport/kafka.log
  MONGO_URL=mongodb://127.0.0.1:$mport/   log: $TREERAG_RUN/ferretdb-$mport/ferretdb.log
  stop with: $(dirname "$0")/down.sh (same TREERAG_* env)
MSG
