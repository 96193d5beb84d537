"""jumbo.protocol.terminate: the `run` executable's first import gives the very guard of
jumbo.core.terminate (one list of noted signals, so the tool's runner, asking
jumbo.core.terminate, sees what came)."""

from test_core_terminate import run_through

from jumbo.core import terminate as core_terminate
from jumbo.protocol import terminate


def test_the_executables_one_name_is_the_core_guard():
    assert terminate.defer is core_terminate.defer
    assert terminate.__all__ == ["defer"]


def test_deferred_through_the_protocol_a_sigterm_is_noted():
    assert run_through("jumbo.protocol.terminate") == ("False", "True", 0)
