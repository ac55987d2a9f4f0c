"""API keys in the embedded store's folder: api_keys/<key id>.json, the secret's SHA-256 only."""

from __future__ import annotations

import os
import re
from pathlib import Path

from shared.model.api_keys import KEY_ID_PATTERN, ApiKeyRecord
from shared.model.clock import utc_now

_KEY_ID = re.compile(KEY_ID_PATTERN)


class EmbeddedKeyStore:
    """The `KeyStore` (shared/ports/api_keys.py) in a folder, for one process."""

    def __init__(self, root: str | Path) -> None:
        self.folder = Path(root) / "api_keys"

    def _path(self, key_id: str) -> Path | None:
        return self.folder / f"{key_id}.json" if _KEY_ID.match(key_id) else None

    def _write(self, record: ApiKeyRecord, *, exclusive: bool) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{record.key_id}.json"
        if exclusive:
            # O_EXCL: two processes drawing the same id cannot both store it.
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
                out.write(record.model_dump_json().encode())
            return
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(record.model_dump_json().encode())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)

    async def add(self, record: ApiKeyRecord) -> None:
        try:
            self._write(record, exclusive=True)
        except FileExistsError as exc:
            raise ValueError(f"key id {record.key_id} is taken") from exc

    async def get(self, key_id: str) -> ApiKeyRecord | None:
        path = self._path(key_id)
        if path is None or not path.is_file():
            return None
        return ApiKeyRecord.model_validate_json(path.read_bytes())

    async def list(self) -> list[ApiKeyRecord]:
        if not self.folder.is_dir():
            return []
        records = [ApiKeyRecord.model_validate_json(p.read_bytes()) for p in self.folder.glob("*.json")]
        return sorted(records, key=lambda r: (r.created_at, r.key_id))

    async def revoke(self, key_id: str) -> bool:
        record = await self.get(key_id)
        if record is None:
            return False
        if not record.revoked:
            self._write(record.model_copy(update={"revoked_at": utc_now()}), exclusive=False)
        return True
