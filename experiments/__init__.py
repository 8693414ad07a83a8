"""The ``psygym`` command line, one module per command.

Commands: odds, simulate, bench, solve, advise, evaluate, compare, train, tune, play and replay.
"""
