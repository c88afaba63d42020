"""The lazy method (``method="lazy"``; docs/lazy-search.md): LazyGraphRAG's idea beside
map-reduce. No community summary is read: at query time the question is expanded into a few
subqueries, source chunks are ranked for each and grouped by the communities whose entities
they mention, and a fixed budget of relevance tests walks the hierarchy from the top level down
(iterative deepening); what they find relevant, with the claims they drew from it, is mapped
community by community and reduced as the other methods are.

``expansion`` (step 1), ``candidates`` (step 2), ``relevance`` (one test), ``budget`` (the
relevance budget's tickets), ``walk`` (step 3), ``evidence`` (steps 1-3 and the map texts of
step 4), ``state`` (the fold of their events), ``cost`` (the estimate before a run).

The package imports none of them itself: the run's fold (``graphrag_core.state``) reads
``state`` without the rest (the ranking's numpy among them).
"""
