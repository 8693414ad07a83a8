"""The ``psygym`` command line: odds, simulate, bench, solve, advise, evaluate, compare, train,
tune, play and replay, one module each."""
