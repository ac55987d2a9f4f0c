"""The Kafka connection settings: combinations that cannot work are refused with what to set, the
password is never shown, and FastStream's broker and aiokafka's clients get the same connection.
(tests/integration/test_kafka_security.py runs it against a broker with a SASL_SSL listener.)"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import pytest
from faststream.kafka.security import parse_security
from pydantic import ValidationError

from shared.adapters.kafka.connection import KafkaAccessError, kafka_connection
from shared.settings import Settings

PASSWORD = "hunter2-kafka-secret"
SASL = {"kafka_sasl_mechanism": "SCRAM-SHA-512", "kafka_sasl_username": "treerag", "kafka_sasl_password": PASSWORD}


@pytest.mark.parametrize(("values", "says"), [
    ({"kafka_security_protocol": "SASL_SSL"},
     "needs TREERAG_KAFKA_SASL_MECHANISM and TREERAG_KAFKA_SASL_USERNAME and TREERAG_KAFKA_SASL_PASSWORD"),
    ({"kafka_security_protocol": "SASL_SSL", "kafka_sasl_mechanism": "PLAIN", "kafka_sasl_password": PASSWORD},
     "TREERAG_KAFKA_SECURITY_PROTOCOL=SASL_SSL needs TREERAG_KAFKA_SASL_USERNAME ("),
    ({"kafka_security_protocol": "SASL_PLAINTEXT", "kafka_sasl_mechanism": "PLAIN", "kafka_sasl_username": "u"},
     "needs TREERAG_KAFKA_SASL_PASSWORD"),
    ({"kafka_sasl_username": "u", "kafka_sasl_password": PASSWORD},
     "TREERAG_KAFKA_SASL_USERNAME, TREERAG_KAFKA_SASL_PASSWORD set, but TREERAG_KAFKA_SECURITY_PROTOCOL=PLAINTEXT"),
    ({"kafka_security_protocol": "SSL", **SASL}, "sends no credentials: set TREERAG_KAFKA_SECURITY_PROTOCOL to SASL_SSL"),
    ({"kafka_ssl_cafile": "/etc/ca.pem"}, "TREERAG_KAFKA_SSL_CAFILE set, but TREERAG_KAFKA_SECURITY_PROTOCOL=PLAINTEXT"),
    ({"kafka_security_protocol": "SASL_PLAINTEXT", **SASL, "kafka_ssl_cafile": "/etc/ca.pem"}, "does not use TLS"),
    ({"kafka_security_protocol": "SSL", "kafka_ssl_keyfile": "/etc/key.pem"}, "set it"),
    ({"kafka_security_protocol": "SASL_SSL", **SASL, "kafka_sasl_mechanism": "AWS_MSK_IAM"},
     "'PLAIN', 'SCRAM-SHA-256' or 'SCRAM-SHA-512'"),
])
def test_a_combination_that_cannot_connect_is_refused_with_what_to_set(values: dict[str, Any], says: str) -> None:
    with pytest.raises(ValidationError) as refused:
        Settings(**values)
    assert says in str(refused.value)
    assert PASSWORD not in str(refused.value)


def test_the_password_is_never_shown() -> None:
    settings = Settings(kafka_security_protocol="SASL_SSL", **SASL)
    connection = kafka_connection(settings)
    for shown in (repr(settings), str(settings), settings.model_dump_json(), repr(connection), str(connection)):
        assert PASSWORD not in shown
    assert connection.client_options()["sasl_plain_password"] == PASSWORD  # handed to the client only


@pytest.mark.parametrize("values", [
    {},
    {"kafka_security_protocol": "SSL"},
    {"kafka_security_protocol": "SASL_PLAINTEXT", **SASL, "kafka_sasl_mechanism": "PLAIN"},
    {"kafka_security_protocol": "SASL_PLAINTEXT", **SASL, "kafka_sasl_mechanism": "SCRAM-SHA-256"},
    {"kafka_security_protocol": "SASL_SSL", **SASL},
])
def test_the_broker_and_the_clients_connect_alike(values: dict[str, Any]) -> None:
    """FastStream turns the broker's security object back into aiokafka's arguments: they are the
    ones the admin client and the tools get."""
    connection = kafka_connection(Settings(kafka_bootstrap="broker-1:9096,broker-2:9096", **values))
    options = connection.client_options()
    assert options.pop("bootstrap_servers") == "broker-1:9096,broker-2:9096"
    security = connection.broker_security()
    if security is None:
        assert options == {"security_protocol": "PLAINTEXT", "ssl_context": None}  # aiokafka's defaults
    else:
        assert parse_security(security) == options


def test_tls_checks_the_certificate_and_the_host_name() -> None:
    context = kafka_connection(Settings(kafka_security_protocol="SSL")).ssl_context
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


def test_an_unreadable_ca_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-ca.pem"
    with pytest.raises(KafkaAccessError, match=f"TREERAG_KAFKA_SSL_CAFILE={missing}"):
        kafka_connection(Settings(kafka_security_protocol="SSL", kafka_ssl_cafile=missing))


def test_the_partitions_setting_keeps_its_former_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TREERAG_KAFKA_TOPIC_PARTITIONS", raising=False)
    monkeypatch.delenv("TREERAG_TOPIC_PARTITIONS", raising=False)
    assert Settings().kafka_topic_partitions is None and Settings().kafka_topic_replication is None
    monkeypatch.setenv("TREERAG_TOPIC_PARTITIONS", "4")
    assert Settings().kafka_topic_partitions == 4
    monkeypatch.setenv("TREERAG_KAFKA_TOPIC_PARTITIONS", "12")
    assert Settings().kafka_topic_partitions == 12
    assert Settings(kafka_topic_partitions=3).kafka_topic_partitions == 3


def test_a_variable_left_empty_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty placeholder in a Secret is no password, and an empty CA file is not the folder "."."""
    for name in ("SASL_PASSWORD", "SASL_USERNAME", "SSL_CAFILE", "TOPIC_REPLICATION", "TOPIC_PARTITIONS"):
        monkeypatch.setenv(f"TREERAG_KAFKA_{name}", "")
    settings = Settings()
    assert settings.kafka_sasl_password is None and settings.kafka_ssl_cafile is None
    assert settings.kafka_topic_replication is None and settings.kafka_topic_partitions is None
