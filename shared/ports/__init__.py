"""Interfaces the domain code accepts; adapters and in-memory fakes implement them."""
