"""The Index browser's room: the hierarchy, each level's counts and tokens, the communities and
their entity graphs (pages/index_browser.py lays it out).

It imports the shared layer and the engine, never another page's package.
"""
