"""`treerag keys create --tenant NAME [--role admin|editor|reader]`, `treerag keys list`, `treerag keys revoke ID`:
the API keys the gateway asks for (TREERAG_AUTH=on). In a gateway container, where the `treerag`
CLI is not installed: `python -m services.gateway.keys create --tenant NAME [--role ROLE]`. A key's role says what it
may do (services/gateway/roles.py); `--admin` is the older spelling of `--role admin`.

Keys live where the gateway reads them: MongoDB at TREERAG_MONGO_URL / TREERAG_MONGO_DB (or
--mongo-url / --mongo-db); `--store DIR` keeps them in an embedded store's folder instead. A new
key is printed once; only its hash is stored, so a lost key is revoked and replaced.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from services.gateway.roles import role_of_key
from shared.app.api_keys import issue_key
from shared.model.api_keys import RoleName
from shared.model.ids import TENANT_PATTERN
from shared.ports.api_keys import KeyStore
from shared.settings import get_settings
from shared.text.secrets import redact


def _tenant(value: str) -> str:
    if not re.match(TENANT_PATTERN, value):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a tenant name: 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("keys", help="Create, list and revoke the gateway's API keys.")
    add_arguments(parser)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    settings = get_settings()
    parser.add_argument("--mongo-url", default=settings.mongo_url, help="MongoDB holding the keys (TREERAG_MONGO_URL).")
    parser.add_argument("--mongo-db", default=settings.mongo_db, help="Its database (TREERAG_MONGO_DB).")
    parser.add_argument("--store", type=Path, default=None, help="An embedded store folder instead of MongoDB.")
    actions = parser.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="Create a key for a tenant; the key is printed once.")
    create.add_argument("--tenant", required=True, type=_tenant, help="Whose documents and queries the key reaches.")
    create.add_argument("--role", choices=("admin", "editor", "reader"), default="editor",
                        help="reader: ask and view; editor (the default): also upload and delete documents; "
                             "admin: also /metrics and /v1/pipeline.")
    create.add_argument("--admin", action="store_true", help="The same as --role admin.")
    actions.add_parser("list", help="Every key's id, tenant, role and state (never the keys themselves).")
    revoke = actions.add_parser("revoke", help="Refuse a key from now on (within the gateway's key cache time).")
    revoke.add_argument("key_id", metavar="ID", help="The key id (`treerag keys list`; the part after trk_).")
    parser.set_defaults(func=run)


@asynccontextmanager
async def _store(args: argparse.Namespace) -> AsyncIterator[KeyStore]:
    if args.store is not None:
        from shared.adapters.embedded.api_keys import EmbeddedKeyStore

        yield EmbeddedKeyStore(args.store)
        return
    from shared.adapters.mongo.api_keys import MongoKeyStore
    from shared.adapters.mongo.store import connect

    client = connect(args.mongo_url)
    try:
        yield MongoKeyStore(client, args.mongo_db)
    finally:
        await client.close()


async def _run(args: argparse.Namespace) -> tuple[int, str]:
    async with _store(args) as store:
        if args.action == "create":
            role: RoleName = "admin" if args.admin else args.role
            issued = await issue_key(store, args.tenant, role=role)
            print(f"created {role} key {issued.record.key_id} for tenant {args.tenant}; it is shown only now:",
                  file=sys.stderr)
            return 0, issued.key
        if args.action == "list":
            lines = [f"{'ID':<12}  {'TENANT':<20}  {'ROLE':<6}  {'CREATED':<20}  STATE"]
            for record in await store.list():
                state = f"revoked {record.revoked_at:%Y-%m-%d %H:%M}" if record.revoked_at else "active"
                lines.append(f"{record.key_id:<12}  {record.tenant:<20}  {role_of_key(record).name:<6}  "
                             f"{record.created_at:%Y-%m-%d %H:%M:%S}   {state}")
            return 0, "\n".join(lines)
        if await store.revoke(args.key_id.removeprefix("trk_").split("_")[0]):
            return 0, f"revoked {args.key_id}"
        return 1, f"no key with id {args.key_id!r}; `treerag keys list` shows the ids"


def run(args: argparse.Namespace) -> int:
    try:
        code, message = asyncio.run(_run(args))
    except Exception as exc:  # the store is unreachable or refused: say where we looked
        where = args.store or f"{redact(args.mongo_url)} (database {args.mongo_db})"
        print(f"error: the key store at {where} failed: {redact(str(exc))}", file=sys.stderr)
        return 1
    print(message if code == 0 else f"error: {message}", file=sys.stdout if code == 0 else sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m services.gateway.keys", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
