from setuptools import setup, find_packages

from jumbo import __version__

setup(
    name="jumbo",
    version=__version__,
    description="Path MTU, PMTUD black-hole and jumbo-frame measurements for perfSONAR pScheduler",
    packages=find_packages(exclude=["tests"]),
    python_requires=">=3.6",
    install_requires=["jsonschema>=3.0"],
    entry_points={
        "console_scripts": [
            "jumbocheck = jumbo.protocol.probe_cli:main",
            "jumbo-report = jumbo.report.cli:main",
            "jumbo-alarms = jumbo.report.alarms_cli:main",
            "jumbo-fireflies = jumbo.report.fireflies_cli:main",
            "jumbo-replay = jumbo.archive.replay:main",
        ]
    },
)
