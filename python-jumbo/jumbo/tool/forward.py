"""Moved: the forward transport through the reflector is jumbo.probe.reflected's. This name
stays only until jumbo.probe.engine imports it from there."""

from ..probe.reflected import ForwardTransport  # noqa: F401
