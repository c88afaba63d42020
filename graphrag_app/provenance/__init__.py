"""Provenance's room: a community or a record of the index, and what a run did with it
(pages/provenance.py lays it out).

It imports the shared layer and the engine, never another page's package.
"""
