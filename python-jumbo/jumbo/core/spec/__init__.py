"""The spec, typed and checked: the one home of its defaults (typed), its validation beyond
the JSON schema (checks) and the jumbo-throughput spec's (pair).

Public API:
    DEFAULTS, THROUGHPUT_DEFAULTS, PAIR_DEFAULTS, DEFAULT_FLOWS
    RunSpec(spec), ThroughputSpec(phase), run_spec(spec_or_runspec)
    with_defaults(spec), pair_with_defaults(spec), internal_spec(pair_spec)
    validate(spec), require_valid(spec), address_family(text), effective_ip_version(spec)
    validate_pair(spec, path_mtu_bound=None), pair_slot_seconds(spec, path_mtu_bound)
    slot: the run's phases and the jumbo-throughput slot rule (jumbo.core.spec.slot)
"""

from .checks import (MOVED_TO_PAIR_TEST, THROUGHPUT_DURATION_MAX, THROUGHPUT_DURATION_MIN,
                     THROUGHPUT_OMIT_MAX, TIMEOUT_MAX, address_family, effective_ip_version,
                     host_problem, node_problem, require_valid, semantic_problem, shape_problem,
                     validate)
from .pair import (HOST_KEYS, LEG_KEYS, PAIR_DEFAULTS, internal_spec, pair_semantic_problem,
                   pair_shape_problem, pair_slot_seconds, pair_with_defaults, validate_pair)
from .typed import (DEFAULT_FLOWS, DEFAULTS, THROUGHPUT_DEFAULTS, RunSpec, ThroughputSpec,
                    run_spec, with_defaults)

# The package's one public face (its modules' names the rest of the library reads).
__all__ = ["MOVED_TO_PAIR_TEST", "THROUGHPUT_DURATION_MAX", "THROUGHPUT_DURATION_MIN",
           "THROUGHPUT_OMIT_MAX", "TIMEOUT_MAX", "address_family", "effective_ip_version",
           "host_problem", "node_problem", "require_valid", "semantic_problem", "shape_problem",
           "validate", "HOST_KEYS", "LEG_KEYS", "PAIR_DEFAULTS", "internal_spec",
           "pair_semantic_problem", "pair_shape_problem", "pair_slot_seconds",
           "pair_with_defaults", "validate_pair", "DEFAULT_FLOWS", "DEFAULTS",
           "THROUGHPUT_DEFAULTS", "RunSpec", "ThroughputSpec", "run_spec", "with_defaults"]
