"""Bridges from psygym's rules API to other game frameworks.

:mod:`psygym.interop.openspiel` exposes any edition and scenario as an OpenSpiel (``pyspiel``)
Python game; it needs the optional extra ``psygym[openspiel]``. :mod:`psygym.interop.game_source`
says what such a game records of its scenario, so that OpenSpiel can build it again.
"""
