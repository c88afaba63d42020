"""Sweeps' room: one question over levels x seeds x budgets, followed as a job, and how stable and
costly each level is (pages/sweeps.py lays it out).

It imports the shared layer and the engine, never another page's package.
"""
