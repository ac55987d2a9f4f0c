"""The compressor's composition root."""

from __future__ import annotations

from services.compressor.handlers import CompressorHandlers
from shared.stage import StagePorts


async def build(ports: StagePorts) -> CompressorHandlers:
    return CompressorHandlers(ports.bus, ports.queries, ports.repository)
