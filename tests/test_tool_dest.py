"""The dest participant's run (jumbo.tool.dest), driven through the plugin as pScheduler does
(tests/test_plugin_jumbocheck.py has the run helpers)."""

from test_plugin_jumbocheck import REVERSE, _dest_run_on_a_held_port


def test_the_dest_passes_over_a_held_candidate_port_to_the_next():
    """Issue 32 row 8: another program (a background pmtu run) holds the first candidate: the
    dest reflects on the next one and says which it passed over (it failed the run before)."""
    import socket
    spare = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    spare.bind(("0.0.0.0", 0))
    free = spare.getsockname()[1]
    spare.close()
    output, port = _dest_run_on_a_held_port(dict(REVERSE, **{"ip-version": 4}), free=[free],
                                            slot="PT3S")
    assert output["succeeded"] is True, output
    reflected = output["result"]["reflector"]
    assert reflected["port"] == free and reflected["busy-ports"] == [port], reflected
