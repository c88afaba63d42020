"""Explore's room: choose an index and settings, preview the cost, run a global search, watch it
and open every call (pages/explore.py lays it out).

It imports the shared layer and the engine, never another page's package.
"""
