"""Bridges from psygym's rules API to other game frameworks.

:mod:`psygym.interop.openspiel` exposes any edition and scenario as an OpenSpiel (``pyspiel``)
Python game; it needs the optional extra ``psygym[openspiel]``.
"""
