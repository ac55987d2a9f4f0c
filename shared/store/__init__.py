"""Storage adapters behind one repository interface: embedded (files) and MongoDB."""
