"""The services on a Kafka that asks for TLS and a password, as managed clusters do.

A broker of its own (scripts/infra/kafka.sh on free ports, in a temporary folder; the session's
broker is not touched) gets a SASL_SSL listener beside its plaintext one: a CA and a broker
certificate made here, in PEM (Kafka reads it without keytool), a PLAIN user in the listener's
JAAS configuration and a SCRAM-SHA-512 user stored when the storage is formatted (KRaft keeps
SCRAM credentials in its metadata). A stage runtime connects with each mechanism, creates its
topics, publishes an event and consumes it through the delivery layer; the whole stack (gateway,
indexer and the query stages as processes) indexes an upload and answers a question through it.
A wrong password and an untrusted certificate fail at once, with what to set, instead of waiting
for a broker that is up.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import logging
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from shared.adapters.kafka.connection import KafkaAccessError, kafka_connection
from shared.adapters.kafka.runtime import StageRuntime
from shared.adapters.kafka.topics import service_topics
from shared.adapters.mongo.store import connect
from shared.model.delivery import Delivery
from shared.model.events import DocumentDeleted
from shared.settings import Settings
from tests.support.integration.pdfs import manual_pdf
from tests.support.integration.stack import Stack, wait_until
from tests.support.integration.uploads import upload_ready

pytestmark = pytest.mark.integration

KAFKA_SH = Path(__file__).resolve().parents[2] / "scripts" / "infra" / "kafka.sh"
HOST = "127.0.0.1"
PLAIN_USER, PLAIN_PASSWORD = "treerag-plain", "plain-pw-7f3a9c"
SCRAM_USER, SCRAM_PASSWORD = "treerag-scram", "scram-pw-2b8e41"
FAIL_FAST_S = 15.0  # the setup's own timeout is 60 s: a refusal must come well before it


@dataclass(frozen=True)
class SecureKafka:
    bootstrap: str  # the SASL_SSL listener
    cafile: Path
    log: Path


def _free_port_pair() -> int:
    """A port whose next port is free too (the script puts the controller on port + 1)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind((HOST, 0))
            port = int(s.getsockname()[1])
        with socket.socket() as s:
            try:
                s.bind((HOST, port + 1))
            except OSError:
                continue
        return port
    raise RuntimeError("no two consecutive free ports on 127.0.0.1")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def write_certificates(folder: Path) -> tuple[Path, Path]:
    """(the CA's certificate, the broker's key and certificate chain), PEM; the broker's certificate
    names 127.0.0.1, so the clients' host name check passes."""
    now = datetime.datetime.now(datetime.UTC)
    valid = {"not_valid_before": now - datetime.timedelta(minutes=5), "not_valid_after": now + datetime.timedelta(days=1)}
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "treerag test CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(valid["not_valid_before"])
        .not_valid_after(valid["not_valid_after"])
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                     content_commitment=False, key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    broker = (
        x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kafka")]))
        .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(valid["not_valid_before"]).not_valid_after(valid["not_valid_after"])
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(HOST)),
                                                    x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    cafile, keystore = folder / "ca.pem", folder / "broker.pem"
    cafile.write_bytes(ca.public_bytes(pem))
    # Kafka's PEM key store: a PKCS#8 key (unencrypted: Java 17 cannot read PBES2-encrypted keys), then the chain.
    keystore.write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        + broker.public_bytes(pem) + ca.public_bytes(pem)
    )
    keystore.chmod(0o600)
    return cafile, keystore


def secure_listener(port: int, secure_port: int, keystore: Path) -> str:
    """server.properties lines that add the SASL_SSL listener `SECURE` (they override the script's own)."""
    secure = "listener.name.secure"
    return "\n".join([
        f"listeners=PLAINTEXT://{HOST}:{port},CONTROLLER://{HOST}:{port + 1},SECURE://{HOST}:{secure_port}",
        f"advertised.listeners=PLAINTEXT://{HOST}:{port},SECURE://{HOST}:{secure_port}",
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SECURE:SASL_SSL",
        f"{secure}.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512",
        f"{secure}.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'user_{PLAIN_USER}="{PLAIN_PASSWORD}";',
        f"{secure}.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;",
        f"{secure}.ssl.keystore.type=PEM",
        f"{secure}.ssl.keystore.location={keystore}",
        "",
    ])


@pytest.fixture(scope="module")
def secure_kafka() -> Iterator[SecureKafka]:
    state = Path(tempfile.mkdtemp(prefix="treerag-test-kafka-sasl-"))
    port, secure_port = _free_port_pair(), _free_port()
    cafile, keystore = write_certificates(state)
    extra = state / "secure-listener.properties"
    extra.write_text(secure_listener(port, secure_port, keystore))
    env = {
        **os.environ,
        "TREERAG_RUN": str(state),
        "TREERAG_KAFKA_PORT": str(port),
        "TREERAG_KAFKA_EXTRA_CONFIG": str(extra),
        "TREERAG_KAFKA_SCRAM": f"SCRAM-SHA-512=[name={SCRAM_USER},password={SCRAM_PASSWORD}]",
        "PYTHON": sys.executable,
    }

    def kafka(action: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(KAFKA_SH), action], env=env, capture_output=True, text=True, timeout=300)

    try:
        started = kafka("start")
        if started.returncode != 0:
            pytest.fail(f"kafka.sh start with a SASL_SSL listener failed:\n{started.stderr[-3000:]}", pytrace=False)
        yield SecureKafka(f"{HOST}:{secure_port}", cafile, state / f"kafka-{port}" / "kafka.log")
    finally:
        kafka("stop")
        shutil.rmtree(state, ignore_errors=True)


def secure_settings(kafka: SecureKafka, infra: Any, mechanism: str, **overrides: Any) -> Settings:
    user, password = (PLAIN_USER, PLAIN_PASSWORD) if mechanism == "PLAIN" else (SCRAM_USER, SCRAM_PASSWORD)
    run = uuid.uuid4().hex[:8]
    values: dict[str, Any] = {
        "kafka_bootstrap": kafka.bootstrap, "kafka_security_protocol": "SASL_SSL",
        "kafka_sasl_mechanism": mechanism, "kafka_sasl_username": user, "kafka_sasl_password": password,
        "kafka_ssl_cafile": kafka.cafile, "mongo_url": infra.mongo_url, "mongo_db": f"kafka_sasl_{run}",
        "topic_prefix": f"sasl{run}.", "max_attempts": 1,
    }
    return Settings(**(values | overrides))


@pytest.fixture
async def dropped_databases(infra: Any) -> AsyncIterator[list[str]]:
    names: list[str] = []
    yield names
    client = connect(infra.mongo_url)
    try:
        for name in names:
            await client.drop_database(name)
    finally:
        await client.close()


async def partitions_of(settings: Settings, topics: list[str]) -> dict[str, int]:
    admin = AIOKafkaAdminClient(**kafka_connection(settings).client_options())
    await admin.start()
    try:
        return {t["topic"]: len(t["partitions"]) for t in await admin.describe_topics(topics)}
    finally:
        await admin.close()


@pytest.mark.parametrize(("mechanism", "partitions"), [("PLAIN", None), ("SCRAM-SHA-512", 2)])
async def test_an_event_goes_round_a_stage_over_sasl_ssl(
    secure_kafka: SecureKafka, infra: Any, dropped_databases: list[str], caplog: pytest.LogCaptureFixture,
    mechanism: str, partitions: int | None,
) -> None:
    caplog.set_level(logging.INFO)
    settings = secure_settings(secure_kafka, infra, mechanism, kafka_topic_partitions=partitions)
    dropped_databases.append(settings.mongo_db)
    runtime = StageRuntime("indexer", settings, metrics_server=False)
    received: asyncio.Future[tuple[DocumentDeleted, Delivery]] = asyncio.get_running_loop().create_future()

    async def handler(event: DocumentDeleted, delivery: Delivery) -> None:
        if not received.done():
            received.set_result((event, delivery))

    runtime.subscribe(DocumentDeleted, handler)
    await runtime.start()
    try:
        sent = DocumentDeleted(doc_id=f"doc-{mechanism.lower()}", file_name="report.pdf")
        await runtime.bus.publish(sent)
        event, delivery = await asyncio.wait_for(received, 60)
    finally:
        await runtime.stop()
    assert event.event_id == sent.event_id and event.producer == "indexer"
    assert delivery.topic == f"{settings.topic_prefix}{DocumentDeleted.TOPIC}" and delivery.attempt == 1
    # Partitions as asked, else the broker's num.partitions (6 in scripts/infra/kafka.sh).
    counts = await partitions_of(settings, service_topics(settings.topic_prefix))
    assert set(counts.values()) == {partitions or 6}, counts
    password = settings.kafka_sasl_password.get_secret_value() if settings.kafka_sasl_password else ""
    assert password and password not in caplog.text


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
async def test_a_wrong_password_stops_the_stage_at_once_and_says_so(
    secure_kafka: SecureKafka, infra: Any, caplog: pytest.LogCaptureFixture, mechanism: str,
) -> None:
    caplog.set_level(logging.INFO)
    wrong = f"not-the-password-{uuid.uuid4().hex[:6]}"
    runtime = StageRuntime("indexer", secure_settings(secure_kafka, infra, mechanism, kafka_sasl_password=wrong),
                           metrics_server=False)
    began = time.monotonic()
    try:
        with pytest.raises(KafkaAccessError, match="refused the credentials") as refused:
            await runtime.start()
    finally:
        await runtime.close()
    assert time.monotonic() - began < FAIL_FAST_S
    message = str(refused.value)
    assert "TREERAG_KAFKA_SASL_PASSWORD" in message and mechanism in message
    assert wrong not in message and wrong not in caplog.text


async def test_a_broker_certificate_from_an_unknown_ca_is_refused_at_once(secure_kafka: SecureKafka, infra: Any) -> None:
    # Without the test CA the system's CAs are used, and none of them signed the broker's certificate.
    settings = secure_settings(secure_kafka, infra, "PLAIN", kafka_ssl_cafile=None)
    runtime = StageRuntime("indexer", settings, metrics_server=False)
    began = time.monotonic()
    try:
        with pytest.raises(KafkaAccessError, match="TREERAG_KAFKA_SSL_CAFILE"):
            await runtime.start()
    finally:
        await runtime.close()
    assert time.monotonic() - began < FAIL_FAST_S


def test_the_stack_indexes_and_answers_through_a_sasl_ssl_broker(secure_kafka: SecureKafka, infra: Any,
                                                                tmp_path: Path) -> None:
    """As on a managed cluster: every process connects with SCRAM over TLS and the test's CA."""
    security = {
        "TREERAG_KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "TREERAG_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
        "TREERAG_KAFKA_SASL_USERNAME": SCRAM_USER, "TREERAG_KAFKA_SASL_PASSWORD": SCRAM_PASSWORD,
        "TREERAG_KAFKA_SSL_CAFILE": str(secure_kafka.cafile),
    }
    stack = Stack(kafka_bootstrap=secure_kafka.bootstrap, mongo_url=infra.mongo_url,
                  namespace=f"sasl{uuid.uuid4().hex[:8]}", workdir=tmp_path)
    try:
        stages = [stack.start_stage(name, **security) for name in ("indexer", "navigator", "compressor", "verifier")]
        for process in stages:
            stack.wait_consuming(process)
        gateway = stack.start_gateway(stack.create_key("default", admin=True), **security)
        wait_until(gateway.ready, 240, "the gateway's /readyz over SASL_SSL", interval_s=0.5)

        document = upload_ready(gateway, manual_pdf(unit=307), "unit-307.pdf")
        response = gateway.post("/v1/query", json={"question": "At what pressure does the safety valve of unit 307 open?",
                                                  "doc_ids": [document["doc_id"]]}, timeout=120)
        assert response.status_code == 200, response.text + stack.logs()
        body = response.json()
        assert "317 bar" in body["answer"] and body["citations"][0]["pages"] == [2]
        assert [t["stage"] for t in body["timings"]["stages"]] == ["navigator", "compressor", "verifier"]
        logs = "\n".join(p.log_text() for p in stack.processes)
        assert SCRAM_PASSWORD not in logs
    finally:
        stack.stop_all()
        client = stack.mongo()
        try:
            client.drop_database(stack.db_name)
        finally:
            client.close()
