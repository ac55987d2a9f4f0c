"""A multipart upload written to a socket chunk by chunk, so a test sees when the server answers."""

from __future__ import annotations

import select
import socket

BOUNDARY = "treerag-test-boundary"


def send_chunked_upload(port: int, total_bytes: int, chunk_bytes: int = 64 * 1024) -> tuple[int, bytes]:
    """A multipart upload of `total_bytes` with no Content-Length (chunked), written until the
    server answers; returns the bytes written by then and the response's head."""
    head = (f"POST /v1/documents HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\nTransfer-Encoding: chunked\r\n\r\n")
    part = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.pdf\"\r\n"
            f"Content-Type: application/pdf\r\n\r\n%PDF-1.7\n").encode()
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(head.encode())
        chunk = b"0" * chunk_bytes
        first = part
        try:
            while sent < total_bytes:
                payload = first + chunk
                first = b""
                conn.sendall(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
                sent += len(payload)
                readable, _, _ = select.select([conn], [], [], 0)
                if readable:
                    break
        except (BrokenPipeError, ConnectionResetError):
            pass
        conn.settimeout(30)
        response = b""
        while b"\r\n\r\n" not in response:
            data = conn.recv(65536)
            if not data:
                break
            response += data
    return sent, response
