"""Compare's room: two to four stored runs side by side, and the run history (pages/compare.py lays
it out).

It imports the shared layer and the engine, never another page's package.
"""
