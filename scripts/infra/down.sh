#!/usr/bin/env bash
# Stop Kafka and FerretDB started by up.sh for the current TREERAG_KAFKA_PORT / TREERAG_MONGO_PORT.
# Data stays in $TREERAG_RUN/{kafka,ferretdb}-<port>; 'down.sh --wipe' deletes it too.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
rc=0
"$here/kafka.sh" stop || rc=1
"$here/ferretdb.sh" stop || rc=1
if [[ "${1:-}" == "--wipe" ]]; then
  rm -rf "$TREERAG_RUN/kafka-${TREERAG_KAFKA_PORT:-9092}" "$TREERAG_RUN/ferretdb-${TREERAG_MONGO_PORT:-27017}"
  echo "[down] wiped state dirs under $TREERAG_RUN" >&2
fi
exit $rc
