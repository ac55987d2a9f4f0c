"""How every Kafka client of ours connects: the address, TLS and SASL, decided once from the settings.

`kafka_connection(settings)` is the rule. `client_options()` hands it to aiokafka's producer,
consumer and admin client; `broker_security()` is the same connection in FastStream's terms, for
the `KafkaBroker` that builds the stages' producer and consumers. The password stays a `SecretStr`
until a client is built, so neither the settings nor a `KafkaConnection` shows it.

A broker that refuses our credentials or presents a certificate we do not trust is not an outage
that waiting cures, yet aiokafka reports both as "unable to bootstrap", like a broker that is down.
`check_access` opens one connection and tells the cases apart, so a process stops at once with what
to set instead of retrying until its timeout.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass, field
from typing import Any

from aiokafka.conn import collect_hosts, create_conn
from aiokafka.errors import (
    AuthenticationFailedError,
    IllegalSaslStateError,
    SaslAuthenticationFailed,
    UnsupportedSaslMechanismError,
)
from faststream.kafka.security import SASLPlaintext, SASLScram256, SASLScram512
from faststream.security import BaseSecurity
from pydantic import SecretStr

from shared.settings import KafkaSaslMechanism, KafkaSecurityProtocol, Settings

_SASL_SECURITY = {"PLAIN": SASLPlaintext, "SCRAM-SHA-256": SASLScram256, "SCRAM-SHA-512": SASLScram512}
_REFUSED = (SaslAuthenticationFailed, AuthenticationFailedError, UnsupportedSaslMechanismError, IllegalSaslStateError)
CHECK_TIMEOUT_MS = 10_000


class KafkaAccessError(RuntimeError):
    """Kafka cannot be reached as configured (credentials, mechanism, certificates, a CA file): a setting
    to fix, not an outage to wait out."""


@dataclass(frozen=True)
class KafkaConnection:
    bootstrap: str
    security_protocol: KafkaSecurityProtocol = "PLAINTEXT"
    ssl_context: ssl.SSLContext | None = None
    sasl_mechanism: KafkaSaslMechanism | None = None
    sasl_username: str | None = None
    sasl_password: SecretStr | None = field(default=None, repr=False)

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    def security_options(self) -> dict[str, Any]:
        """aiokafka's keyword arguments for TLS and SASL (the same for producer, consumer and admin)."""
        options: dict[str, Any] = {"security_protocol": self.security_protocol, "ssl_context": self.ssl_context}
        if self.sasl_mechanism is not None:
            options |= {
                "sasl_mechanism": self.sasl_mechanism,
                "sasl_plain_username": self.sasl_username,
                "sasl_plain_password": self.sasl_password.get_secret_value() if self.sasl_password else None,
            }
        return options

    def client_options(self) -> dict[str, Any]:
        """Everything an `AIOKafkaProducer`, `AIOKafkaConsumer` or `AIOKafkaAdminClient` needs to connect."""
        return {"bootstrap_servers": self.bootstrap, **self.security_options()}

    def broker_security(self) -> BaseSecurity | None:
        """The same connection as FastStream's security object (it turns it back into `security_options`)."""
        if self.sasl_mechanism is not None:
            password = self.sasl_password.get_secret_value() if self.sasl_password else ""
            return _SASL_SECURITY[self.sasl_mechanism](
                self.sasl_username or "", password, ssl_context=self.ssl_context, use_ssl=self.uses_tls
            )
        if self.uses_tls:
            return BaseSecurity(ssl_context=self.ssl_context, use_ssl=True)
        return None


def kafka_connection(settings: Settings) -> KafkaConnection:
    """The connection every Kafka client of this process uses (`Settings` has checked the combination)."""
    protocol = settings.kafka_security_protocol
    sasl = protocol.startswith("SASL_")
    return KafkaConnection(
        bootstrap=settings.kafka_bootstrap,
        security_protocol=protocol,
        ssl_context=_ssl_context(settings) if protocol.endswith("SSL") else None,
        sasl_mechanism=settings.kafka_sasl_mechanism if sasl else None,
        sasl_username=settings.kafka_sasl_username if sasl else None,
        sasl_password=settings.kafka_sasl_password if sasl else None,
    )


def _ssl_context(settings: Settings) -> ssl.SSLContext:
    """Verifies the broker's certificate and host name against `kafka_ssl_cafile` (else the system's CAs)."""
    cafile = settings.kafka_ssl_cafile
    try:
        context = ssl.create_default_context(cafile=str(cafile) if cafile else None)
    except (OSError, ssl.SSLError) as exc:
        raise KafkaAccessError(f"TREERAG_KAFKA_SSL_CAFILE={cafile} could not be read as PEM CA certificates: {exc}") from exc
    if settings.kafka_ssl_certfile:
        keyfile = settings.kafka_ssl_keyfile
        password = settings.kafka_ssl_key_password
        try:
            # A password is always given, so an encrypted key without one fails here instead of
            # OpenSSL asking for it on a terminal.
            context.load_cert_chain(str(settings.kafka_ssl_certfile), str(keyfile) if keyfile else None,
                                    password=password.get_secret_value() if password else "")
        except (OSError, ssl.SSLError) as exc:
            raise KafkaAccessError(
                f"the client certificate TREERAG_KAFKA_SSL_CERTFILE={settings.kafka_ssl_certfile} "
                f"(key: {keyfile or 'in the same file'}) could not be loaded: {exc}. An encrypted key needs "
                "TREERAG_KAFKA_SSL_KEY_PASSWORD."
            ) from exc
    return context


async def check_access(connection: KafkaConnection) -> None:
    """Connect once to a bootstrap address, as the clients do; raise `KafkaAccessError` when the broker
    answered and refused us. Anything else (nothing listening, a timeout) returns: an outage."""
    host, port, _ = collect_hosts(connection.bootstrap, randomize=False)[0]
    address = f"{host}:{port}"
    try:
        conn = await create_conn(host, port, request_timeout_ms=CHECK_TIMEOUT_MS, **connection.security_options())
    except _REFUSED as exc:
        raise KafkaAccessError(
            f"Kafka at {address} refused the credentials of user {connection.sasl_username!r} with "
            f"{connection.sasl_mechanism} ({exc}): check TREERAG_KAFKA_SASL_USERNAME, TREERAG_KAFKA_SASL_PASSWORD "
            "and TREERAG_KAFKA_SASL_MECHANISM"
        ) from exc
    except ssl.SSLCertVerificationError as exc:
        raise KafkaAccessError(
            f"the TLS certificate of Kafka at {address} is not trusted ({exc.verify_message}): set "
            "TREERAG_KAFKA_SSL_CAFILE to the CA that signed it, and reach the broker by a name its certificate holds"
        ) from exc
    except ssl.SSLError as exc:
        raise KafkaAccessError(
            f"the TLS handshake with Kafka at {address} failed ({exc}): does that listener speak TLS? "
            f"TREERAG_KAFKA_SECURITY_PROTOCOL is {connection.security_protocol}"
        ) from exc
    except (OSError, asyncio.TimeoutError, RuntimeError):
        return  # not listening, reset, timed out, closed: the caller's retry decides
    conn.close()
