"""The OpenSearch store beside perfSONAR's archive.

client.py   the HTTP client: URL, credentials, TLS, timeouts, retries, names, bulk
layout.py   what this suite owns there: names, mappings, templates, the latest index's packs
logstash.py the document perfSONAR's Logstash pipeline makes of a result (the store writes
            this suite's own runs in that shape)
store.py    the writer (and the few reads the archiver, replay and set-up need)
install.py  the set-up's steps and checks; setup.py their command line
search.py, rows.py, changes.py, reader.py, evidence.py   the report's reader
"""
