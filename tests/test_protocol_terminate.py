"""jumbo.protocol.terminate: the `run` executable's first import gives the very guard of
jumbo.core.terminate (one list of noted signals, so the tool's runner sees what came)."""

from test_core_terminate import run_through

from jumbo.core import terminate as core_terminate
from jumbo.protocol import terminate


def test_the_executables_names_are_the_core_guard():
    assert terminate.defer is core_terminate.defer
    assert terminate.received is core_terminate.received


def test_deferred_through_the_protocol_a_sigterm_is_noted():
    assert run_through("jumbo.protocol.terminate") == ("False", "True", 0)
