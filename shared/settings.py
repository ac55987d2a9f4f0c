"""Process settings, read from the environment (prefix TREERAG_) and overridable in code."""

from __future__ import annotations

import ipaddress
import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

KafkaSecurityProtocol = Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
KafkaSaslMechanism = Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]


class Settings(BaseSettings):
    # `populate_by_name`: a setting with an older environment name is still given by its field name in code.
    # `hide_input_in_errors`: a refused setting is named, its value (a password, say) is not repeated.
    model_config = SettingsConfigDict(
        env_prefix="TREERAG_", extra="ignore", populate_by_name=True, hide_input_in_errors=True
    )

    store_dir: Path = Field(default=Path("data"), description="Embedded store folder.")
    kafka_bootstrap: str = Field(default="127.0.0.1:9092",
                                 description="The brokers to start from (host:port, comma-separated).")
    kafka_security_protocol: KafkaSecurityProtocol = Field(
        default="PLAINTEXT",
        description="How every client of ours talks to Kafka: PLAINTEXT, SSL (TLS), SASL_PLAINTEXT or SASL_SSL "
        "(a user name and password, over TLS for SASL_SSL). Managed services want SASL_SSL (docs/deploy.md).",
    )
    kafka_sasl_mechanism: KafkaSaslMechanism | None = Field(
        default=None, description="With SASL_*: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (what the cluster enables)."
    )
    kafka_sasl_username: str | None = Field(default=None, description="With SASL_*: the user (an API key, say).")
    kafka_sasl_password: SecretStr | None = Field(
        default=None, description="With SASL_*: the password (an API secret, say); never shown or logged."
    )
    kafka_ssl_cafile: Path | None = Field(
        default=None,
        description="With SSL or SASL_SSL: a PEM file of the CAs the brokers' certificates must chain to; unset: "
        "the system's CAs (enough for MSK, Confluent Cloud and Event Hubs). The broker's host name is checked.",
    )
    kafka_ssl_certfile: Path | None = Field(
        default=None, description="With SSL or SASL_SSL: this client's PEM certificate, for brokers that ask for one "
        "(mutual TLS); its key in it or in kafka_ssl_keyfile.",
    )
    kafka_ssl_keyfile: Path | None = Field(default=None, description="The PEM private key of kafka_ssl_certfile.")
    kafka_ssl_key_password: SecretStr | None = Field(
        default=None, description="The password of an encrypted kafka_ssl_keyfile (or of the key in the cert file)."
    )
    kafka_topic_replication: int | None = Field(
        default=None, ge=1,
        description="Copies of each partition of the topics the stages create; unset: the broker's "
        "default.replication.factor. Producers wait for every in-sync copy unless this is 1.",
    )
    kafka_topic_partitions: int | None = Field(
        default=None, ge=1,
        # The name before the Kafka settings had their prefix is still read.
        validation_alias=AliasChoices("TREERAG_KAFKA_TOPIC_PARTITIONS", "TREERAG_TOPIC_PARTITIONS"),
        description="Partitions of each topic the stages create (existing topics with fewer are grown); unset: the "
        "broker's num.partitions, and nothing is grown. A stage's replicas beyond it own no partition.",
    )
    mongo_url: str = Field(default="mongodb://127.0.0.1:27017/",
                           description="The MongoDB (or FerretDB) the services store in; a mongodb+srv:// URL works.")
    mongo_db: str = Field(default="treerag", description="The database of that server the services use.")
    blob_dir: Path | None = Field(
        default=None,
        description="Folder for the bytes of uploaded files, shared by the gateway and the indexers (one machine, "
        "or a volume every replica mounts read-write); unset: GridFS in the document store. FerretDB on SQLite "
        "stores binary as base64 JSON, so on it a folder costs far less CPU.",
    )
    tenant: str = Field(
        default="default", description="Whose documents a caller reaches when no key is asked for (TREERAG_AUTH=off)."
    )
    topic_prefix: str = Field(
        default="", description="Prepended to every topic and consumer group (several systems on one cluster)."
    )
    max_attempts: int = Field(default=3, ge=1, description="Handler attempts before the DLQ.")
    max_pages: int = Field(default=10_000, ge=1, description="Larger PDFs are refused.")
    ocr: Literal["auto", "off"] = Field(
        default="auto",
        description="auto: pages without a text layer are recognised with Tesseract (Debian's tesseract-ocr) "
        "when it is installed; off: they stay empty and the document gets a warning.",
    )
    ocr_languages: str = Field(default="eng", description="Tesseract languages, e.g. 'eng+deu' (installed packs).")
    ocr_workers: int = Field(default=0, ge=0, description="Pages recognised at once; 0: one per core.")
    max_upload_bytes: int = Field(default=200 * 1024 * 1024, ge=1, description="Larger PDFs are refused (413).")
    max_request_bytes: int = Field(
        default=512 * 1024 * 1024, ge=1,
        description="Larger upload requests (one file or a batch, multipart) are refused (413) as they stream in.",
    )
    max_json_bytes: int = Field(default=1024 * 1024, ge=1, description="Larger JSON request bodies are refused (413).")
    query_timeout_s: float = Field(
        default=30.0, gt=0, description="How long a query waits for its answer when the request names no timeout_s."
    )
    request_timeout_s: float = Field(
        default=10.0, gt=0, description="A gateway request's time budget once its body is read (a query's is its "
        "timeout_s): past it, or when Kafka or MongoDB is unreachable, the answer is 503 with Retry-After.",
    )
    heartbeat_interval_s: float = Field(default=3.0, gt=0, description="How often a stage process writes its heartbeat.")
    heartbeat_ttl_s: float = Field(
        default=10.0, gt=0, description="A stage with no heartbeat this recent is dead (/readyz answers 503)."
    )
    ready_stages: str = Field(
        default="indexer,navigator,compressor,verifier",
        description="Stages /readyz requires alive (comma-separated); each needs one live process.",
    )
    retry_after_s: float = Field(default=5.0, gt=0, description="The Retry-After the gateway's 503 answers carry.")
    publish_timeout_s: float = Field(
        default=2.0, gt=0, description="How long an upload waits for Kafka before leaving the event to the outbox relay."
    )
    outbox_relay_interval_s: float = Field(default=1.0, gt=0, description="How often the gateway's relay runs.")
    kafka_commit_interval_s: float = Field(
        default=0.5, ge=0, le=60,
        description="How often the query stages commit the offsets of the messages they handled; 0: after each "
        "message. After a crash up to this long of handled messages are recomputed (never answered twice).",
    )
    gateway_port: int = Field(default=8000, description="The gateway's HTTP port.")
    gateway_host: str = Field(default="127.0.0.1", description="Interface the gateway listens on.")
    metrics_port: int | None = Field(default=None, description="The port of a process's /metrics (0: any free port); unset: the stage's own (indexer 9101, navigator 9102, compressor 9103, verifier 9104; the gateway serves it on its API port, for an admin key).")
    prometheus_url: str | None = Field(
        default=None, description="Prometheus the gateway's pipeline page reads per-stage figures from.",
    )
    metrics_host: str = Field(default="127.0.0.1", description="Interface the stages' /metrics listen on.")
    allowed_hosts: str = Field(
        default="127.0.0.1,localhost,::1",
        description="Host headers the gateway answers (comma-separated; '*.example.com' wildcards, '*' any): "
        "a page on another site cannot reach a loopback gateway through DNS rebinding.",
    )
    auth: Literal["on", "off"] = Field(
        default="on",
        description="The gateway asks every request but /healthz and /readyz for an API key (`treerag keys`); "
        "'off' serves everyone as TREERAG_TENANT (a gateway only its own machine reaches).",
    )
    auth_cache_s: float = Field(
        default=5.0, ge=0, description="How long the gateway reuses a key it looked up: a revoked key works that long."
    )
    rate_limit_per_s: float = Field(
        default=20.0, ge=0, description="Requests per second each API key may make on average (per replica; 0: no limit)."
    )
    rate_limit_burst: int = Field(default=60, ge=1, description="Requests an API key may make at once.")
    auth_failures_per_s: float = Field(
        default=1.0, ge=0,
        description="Requests with a key that is not valid one client address may make per second on average, "
        "past its burst; further ones get 429 before any look-up (per replica; 0: no limit).",
    )
    auth_failure_burst: int = Field(
        default=20, ge=1, description="Requests with a key that is not valid one client address may make at once."
    )
    trusted_proxies: str = Field(
        default="",
        description="Addresses or networks (comma-separated, e.g. 10.0.0.0/8) of the proxies in front of the "
        "gateway: a request from one of them counts as the client address it names in X-Forwarded-For (the "
        "right-most one no such proxy added) for the per-address budget. Empty: the TCP peer, whatever the header.",
    )
    # Sign-in with an OIDC provider (docs/sign-in.md); off while oidc_issuer is empty.
    oidc_issuer: str = Field(
        default="", description="The OIDC provider's issuer URL (its /.well-known/openid-configuration is read); "
        "empty: no sign-in, API keys only.",
    )
    oidc_client_id: str = Field(default="", description="The gateway's client id at the provider (the web app's sign-in).")
    oidc_client_secret: SecretStr | None = Field(
        default=None, description="The client secret, for providers that ask one even with PKCE (Google, Entra ID "
        "web apps); the gateway adds it when it redeems a code, the browser never sees it.",
    )
    oidc_audience: str = Field(
        default="", description="The `aud` a token must carry (comma-separated: any of them); empty: the client id.",
    )
    oidc_tenant_claim: str = Field(
        default="", description="The claim (a dotted path for a nested one) naming the caller's tenant; empty: every "
        "signed-in user is TREERAG_TENANT.",
    )
    oidc_role_claim: str = Field(
        default="groups", description="The claim (dotted path; a string or a list) holding the groups or roles mapped "
        "to a role.",
    )
    oidc_roles: str = Field(
        default="", description="Group names to roles, e.g. 'treerag-admins=admin,staff=editor,*=reader' ('*': anyone "
        "else signed in); the highest role wins. Empty: the claim's values are role names.",
    )
    oidc_leeway_s: int = Field(
        default=30, ge=0, description="Seconds a token's expiry and issue time may be off (the provider's clock and ours).",
    )
    oidc_jwks_cache_s: float = Field(
        default=3600.0, gt=0, description="How long the provider's signing keys are reused; an unknown key id "
        "refetches them sooner (at most every 10 s).",
    )
    cors_origins: str = Field(
        default="", description="Origins allowed to call the gateway from a browser (comma-separated); empty: none."
    )

    log_file: Path | None = Field(
        default=None, description="A service writes its JSON logs to this file, rotated by size; unset: to stderr."
    )
    log_max_bytes: int = Field(default=20 * 1024 * 1024, ge=0, description="Rotate the log file past this size.")
    log_backups: int = Field(default=3, ge=0, description="Rotated log files kept (file.1 ... file.N).")

    llm: Literal["gemini", "openai", "off"] = Field(
        default="off", description="The model that builds trees, scores nodes and writes answers when asked: "
        "'gemini', 'openai' (any OpenAI-compatible server) or 'off' (docs/llm.md)."
    )
    llm_model: str | None = Field(default=None, description="The model's name at its provider; unset: the provider's default.")
    llm_base_url: str | None = Field(
        default=None, description="With 'openai': the server's base URL (http://localhost:11434/v1 for Ollama)."
    )
    llm_api_key: str | None = Field(
        default=None, description="The provider's key (GOOGLE_API_KEY is read first for 'gemini'); never logged."
    )
    llm_timeout_s: float = Field(default=60.0, description="Seconds one model call may take.")
    llm_max_concurrency: int = Field(default=4, description="Model calls one process makes at once.")
    llm_context_tokens: int | None = Field(
        default=None, ge=1024, description="The model's context window in tokens: tree and summary calls are sized "
        "to fit it (4096 for the local SmolLM2 server). Unset: sized for long-context models, about 60k tokens a call."
    )

    nli: str = Field(
        default="off",
        description="Entailment model for the verifier: 'off', or a folder holding model.onnx, tokenizer.json "
        "and config.json (an NLI cross-encoder exported to ONNX; nothing is downloaded).",
    )
    reranker: str = Field(
        default="off",
        description="Cross-encoder that reorders the fused ranking's best pages: 'off', or a folder holding "
        "model.onnx and tokenizer.json (`scripts/models/reranker.sh fetch` makes one; nothing is downloaded). "
        "Costs about 1 s of CPU per question (docs/querying.md, Reranking).",
    )
    embeddings: Literal["wordllama", "fastembed", "sentence-transformers", "off"] = Field(
        default="wordllama",
        description="Dense vectors for pages, sections and questions (see shared/adapters/embeddings). "
        "wordllama needs no download; fastembed and sentence-transformers load a model named by "
        "embeddings_model (downloaded once into embeddings_cache) or found in embeddings_path.",
    )
    embeddings_model: str | None = Field(
        default=None, description="Model name for fastembed / sentence-transformers; unset: the backend's default."
    )
    embeddings_path: Path | None = Field(
        default=None, description="A local model folder: loaded from there, never downloaded."
    )
    embeddings_cache: Path | None = Field(
        default=None, description="Where fastembed / sentence-transformers keep downloaded models."
    )

    @field_validator(
        "kafka_sasl_mechanism", "kafka_sasl_username", "kafka_sasl_password", "kafka_ssl_cafile", "kafka_ssl_certfile",
        "kafka_ssl_keyfile", "kafka_ssl_key_password", "kafka_topic_replication", "kafka_topic_partitions", mode="before",
    )
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        # A variable left empty (a placeholder in a Secret, say) is no setting: not a password "", nor the path ".".
        return None if value == "" else value

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies_are_networks(cls, value: str) -> str:
        for entry in (item.strip() for item in value.split(",")):
            if not entry:
                continue
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(f"TREERAG_TRUSTED_PROXIES: {entry!r} is no address or network (10.0.0.5, "
                                 "10.0.0.0/8, fd00::/8); a host name or '*' is not accepted") from None
        return value

    @model_validator(mode="after")
    def _kafka_security_is_whole(self) -> Settings:
        problem = kafka_security_problem(self)
        if problem:
            raise ValueError(problem)
        return self


def kafka_security_problem(settings: Settings) -> str | None:
    """What is missing or contradictory in the Kafka connection settings, said with what to set; None when
    they fit. A credential or file the chosen protocol would not use is an error too, not silently ignored."""
    protocol = settings.kafka_security_protocol
    chosen = f"TREERAG_KAFKA_SECURITY_PROTOCOL={protocol}"
    sasl = {"TREERAG_KAFKA_SASL_MECHANISM": settings.kafka_sasl_mechanism,
            "TREERAG_KAFKA_SASL_USERNAME": settings.kafka_sasl_username,
            "TREERAG_KAFKA_SASL_PASSWORD": settings.kafka_sasl_password}
    tls = {"TREERAG_KAFKA_SSL_CAFILE": settings.kafka_ssl_cafile,
           "TREERAG_KAFKA_SSL_CERTFILE": settings.kafka_ssl_certfile,
           "TREERAG_KAFKA_SSL_KEYFILE": settings.kafka_ssl_keyfile,
           "TREERAG_KAFKA_SSL_KEY_PASSWORD": settings.kafka_ssl_key_password}
    if protocol.startswith("SASL_"):
        missing = [name for name, value in sasl.items() if not value]
        if missing:
            return (f"{chosen} needs {' and '.join(missing)} (the mechanism one of PLAIN, SCRAM-SHA-256, "
                    "SCRAM-SHA-512, as the cluster enables it)")
    elif given := [name for name, value in sasl.items() if value]:
        return (f"{', '.join(given)} set, but {chosen} sends no credentials: set TREERAG_KAFKA_SECURITY_PROTOCOL "
                "to SASL_SSL (or SASL_PLAINTEXT), or unset them")
    if not protocol.endswith("SSL") and (given := [name for name, value in tls.items() if value]):
        return (f"{', '.join(given)} set, but {chosen} does not use TLS: set TREERAG_KAFKA_SECURITY_PROTOCOL "
                "to SSL or SASL_SSL, or unset them")
    if not settings.kafka_ssl_certfile and (settings.kafka_ssl_keyfile or settings.kafka_ssl_key_password):
        return "TREERAG_KAFKA_SSL_KEYFILE and TREERAG_KAFKA_SSL_KEY_PASSWORD go with TREERAG_KAFKA_SSL_CERTFILE: set it"
    return None


def get_settings() -> Settings:
    """The settings the environment gives now, each caller its own copy. Reading them consults
    every settings source (milliseconds, on each query), so they are read again only when a
    TREERAG_ variable changes."""
    return _settings_for(_treerag_variables()).model_copy()


def _treerag_variables() -> tuple[tuple[str, str], ...]:
    # Names match case-insensitively (the settings' default), so the key does too.
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.upper().startswith("TREERAG_")))


@lru_cache(maxsize=8)
def _settings_for(_variables: tuple[tuple[str, str], ...]) -> Settings:
    return Settings()
