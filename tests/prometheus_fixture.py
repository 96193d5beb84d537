"""The real Prometheus and the truth exporter of the telemetry tests: lab/prometheus.py."""

from lab.prometheus import (Exporter, PrometheusServer, available, flow_labels, free_port,  # noqa: F401
                            serve_flow, serve_mtu)
