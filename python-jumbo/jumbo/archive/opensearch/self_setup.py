"""The OpenSearch store's own set-up at its first write (OpenSearchStore.ensure_ready): check
that the owned streams and indices are in place and, when allowed, install what is missing, on
a thread that outlives one record's deadline, resumed across archiver processes.

pScheduler's archiver daemon waits 2 minutes for a record's reply and replaces an `archive`
process after a `retry` answer, so on a slow archive one install spans several processes: a
note (jumbo.archive.opensearch.ready.Progress) says an install began, the next process
resumes it at once, and the install itself does only what is left (install_state). Each try
makes progress; each record still gets its answer (or `retry`) within its deadline.
"""

import threading
import time

from ..errors import PermanentError, TransientError
from . import ready
from .client import DeadlineExceeded, MisshapenAnswer, SetupError
from .install import describe, install, problems as setup_problems, ready_at_once

# The note that an install of an archive began and has not ended: a new process resumes it.
INSTALLING = "installing"


class SelfSetup(object):
    """Mixed into OpenSearchStore: needs its _ready, _ready_key, _progress, _installer,
    _clone_args, manage_templates, deadline and url."""

    def ensure_ready(self):
        """Check once that the owned streams and indices are in place; install if allowed.
        Once per process, and once per READY_TTL across processes (jumbo.archive.opensearch.ready)."""
        if self._ready or ready.is_ready(self._ready_key):
            self._ready = True
            return
        try:
            if self._installer is not None or (self.manage_templates
                                               and self._progress.done(INSTALLING)):
                # An install under way here, or begun by an earlier process that was
                # replaced before it ended: resume it straight away (its one read says what
                # is left), without the check first, which would cost the record's time.
                installed = self._install()
            elif ready_at_once(self):
                installed = None
            elif self.manage_templates:
                # Two requests when all is in place. When not, straight to installing
                # before the detailed check that names what is wrong: on a slow archive
                # each request counts against the record's deadline.
                installed = self._install()
            else:
                installed = False
            problems = [] if installed is None else setup_problems(self, quick=installed)
        except (TypeError, KeyError, AttributeError, IndexError) as err:
            raise _misshapen(self.url, "checking the set-up", err)
        if problems:
            raise SetupError(describe(self, problems))
        self._ready = True
        ready.note_ready(self._ready_key)

    def _install(self):
        """Install on a thread of its own with its own connection, and wait for it until the
        record's deadline; True when it completed, False when it failed (refused privileges:
        the detailed check that follows names the command). On a slow archive that outlasts
        one record's 90 s, the record is answered `retry` and the install goes on: the next
        record this process gets waits for it again; and as pScheduler's daemon may replace
        the process, the install is resumable (jumbo.archive.opensearch.install): each try
        does only what is left."""
        if self._installer is None:
            scheme, host, port, base_path, options = self._clone_args
            clone = type(self)(scheme, host, port, base_path, **options)
            progress = self._progress

            def run():
                try:
                    install(clone, progress)
                    clone.installed = True
                except MisshapenAnswer as err:
                    clone.misshapen = err
                except (PermanentError, TransientError):
                    pass  # refused or unreachable: the detailed check says which
                except (TypeError, KeyError, AttributeError, IndexError) as err:
                    clone.misshapen = _misshapen(self.url, "installing", err)
                finally:
                    if not clone.installed:
                        progress.forget(INSTALLING)  # the next try checks first again
                    clone.close()

            clone.misshapen = None
            clone.installed = False
            self._clone = clone
            progress.note(INSTALLING)
            self._installer = threading.Thread(target=run, name="jumbo-opensearch-install")
            self._installer.daemon = True
            self._installer.start()
        wait = None if self.deadline is None else max(0.0, self.deadline - time.monotonic())
        self._installer.join(wait)
        if self._installer.is_alive():
            raise DeadlineExceeded("OpenSearch at %s is being set up by the archiver (index "
                                   "templates, streams, indices); it goes on after this "
                                   "answer, retried" % self.url)
        self._installer = None
        if self._clone.misshapen is not None:
            raise self._clone.misshapen
        if self._clone.installed:
            self._progress.forget(INSTALLING)
        return self._clone.installed


def _misshapen(url, doing, err):
    return MisshapenAnswer("%s: %s gave an answer of a shape OpenSearch does not give (%s %s): "
                           "is the _url an OpenSearch?" % (doing, url, type(err).__name__,
                                                           str(err)[:80]))
