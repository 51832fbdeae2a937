"""The bad-input suite: every case file under ``cases/`` runs one ``stratoflow`` command that must
fail with a named, one-line error (see :mod:`tests.badinput.test_bad_inputs`)."""
