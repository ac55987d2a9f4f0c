"""Everything that talks to the outside: Kafka, MongoDB, the embedded store, LLM providers,
metrics and logs. Domain code reaches these only through `shared.ports`."""
