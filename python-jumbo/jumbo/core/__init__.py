"""The core every part shares: units (ISO 8601, SI), the MTU table, the schemas, validation and
name resolution. Standard library and jsonschema only; runs on the nodes (Python 3.6)."""
