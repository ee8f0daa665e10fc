"""Full re-cluster of one project's segment vectors, and stable topic ids across re-clusters.

HDBSCAN is scikit-learn's (``sklearn.cluster.HDBSCAN``): measured against the ``hdbscan``
package on the same reduced vectors it was as accurate and faster (10,000 segments: 5.4 s vs
7.7 s on this machine's shared cores), and it is already in the lock (docs/topics.md).
Density clustering is quadratic in the worst case, so two things keep a full re-cluster of
100,000 segments under a minute: the vectors are first reduced with PCA (384 -> ``dims``), and
HDBSCAN runs on an evenly spread sample of at most ``max_sample`` segments; the rest (and
HDBSCAN's noise) join their nearest cluster centroid when close enough, else stay unassigned.

Every segment of a project shares a large common part (the same repository, tools, test runs),
so on the raw unit vectors they all sit close together and HDBSCAN's excess-of-mass selection
keeps one cluster holding most of the project: 29 of sungather's 39 segments in one topic, none
at all for projects of 8 and 11 segments (real sessions, ``make bench-topics-real``). So the
vectors are centred on the project's mean (PCA does it), reduced to at most half as many
dimensions as there are segments (density means nothing with fewer points than dimensions),
and made unit length again: HDBSCAN then measures the angle between what each segment says
beyond the project's common ground, not how far it strays from the mean (the segments nearest
the mean all looked alike). Where no cluster of ``min_cluster_size`` forms at all (a project
of a few segments), clusters of 2 are looked for rather than leaving it without a topic; not
always, since pairs split themes that hold together (three clear themes of 5 segments became
6 topics). On the dev projects of the real-session corpus the largest topic's share fell from
74% to 56% at most (5 of 9 segments, in a project of two sessions; 38% or less in the others,
which had 0 topics or 74%), and the coding corpus's ARI rose from 0.894 to 0.921
(docs/topics.md)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]

UNASSIGNED = -1


@dataclass(frozen=True)
class ClusterParams:
    min_cluster_size: int = 3
    min_samples: int | None = 2
    dims: int = 32
    max_sample: int = 5000
    assign_similarity: float = 0.35  # cosine to a centroid for noise and late arrivals


def unit(x: Matrix) -> Matrix:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Matrix = (x / norms).astype(np.float32)
    return out


def _reduce(x: Matrix, dims: int) -> Matrix:
    """Centred on the rows' mean, reduced to ``dims`` (at most half the rows), unit length."""
    dims = min(dims, max(x.shape[0] // 2, 2))
    if x.shape[1] <= dims:
        return unit(x - x.mean(axis=0, keepdims=True))
    from sklearn.decomposition import PCA

    solver = "randomized" if x.shape[0] > 500 else "full"
    pca = PCA(n_components=dims, svd_solver=solver, random_state=0)
    return unit(pca.fit_transform(x).astype(np.float32))


def cluster(vectors: Matrix, params: ClusterParams) -> npt.NDArray[np.int64]:
    """A cluster number per row (``UNASSIGNED`` for none); deterministic for the same input."""
    n = vectors.shape[0]
    labels = np.full(n, UNASSIGNED, dtype=np.int64)
    if n < max(params.min_cluster_size, 2):
        return labels
    from sklearn.cluster import HDBSCAN

    x = unit(vectors)
    sample = (
        np.arange(n)
        if n <= params.max_sample
        else np.linspace(0, n - 1, params.max_sample).astype(np.int64)
    )
    # only the sample is reduced and clustered; the rest joins by cosine in full dimensions
    reduced = _reduce(x[sample], params.dims)
    found = HDBSCAN(
        min_cluster_size=params.min_cluster_size, min_samples=params.min_samples, copy=True
    ).fit_predict(reduced)
    if (found == UNASSIGNED).all() and params.min_cluster_size > 2:
        # a project of a few segments where no 3 hang together: pairs rather than no topic
        found = HDBSCAN(min_cluster_size=2, min_samples=1, copy=True).fit_predict(reduced)
    ids = sorted(int(c) for c in set(found.tolist()) if c >= 0)
    if not ids:
        return labels
    # HDBSCAN's noise joins a cluster in the space the clusters were found in: by the full
    # vectors every segment of a project is close to every centroid (their common ground), so
    # the noise all joined a cluster, mostly the largest (bookminder: 3 -> 5 of its 8)
    noise = np.flatnonzero(found == UNASSIGNED)
    if noise.size:
        best, sims = nearest(reduced[noise], centroids(reduced, found, ids))
        ok = sims >= params.assign_similarity
        found[noise[ok]] = np.asarray(ids, dtype=np.int64)[best[ok]]
    labels[sample] = found
    # the segments outside the sample: by the full vectors (the reduction is the sample's)
    rest = np.flatnonzero(labels == UNASSIGNED)
    rest = rest[~np.isin(rest, sample)]
    if rest.size:
        best, sims = nearest(x[rest], centroids(x, labels, ids))
        ok = sims >= params.assign_similarity
        labels[rest[ok]] = np.asarray(ids, dtype=np.int64)[best[ok]]
    return labels


def centroids(x: Matrix, labels: npt.NDArray[np.int64], ids: Sequence[int]) -> Matrix:
    """Unit-length mean vector of each cluster, in the order of ``ids`` (sorted ascending, as
    ``cluster`` makes them), in one pass over ``x``."""
    order = np.asarray(ids, dtype=np.int64)
    mask = np.isin(labels, order)
    pos = np.searchsorted(order, labels[mask])
    sums = np.zeros((len(order), x.shape[1]), dtype=np.float64)
    np.add.at(sums, pos, x[mask])
    return unit(sums.astype(np.float32))


def nearest(x: Matrix, cents: Matrix) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Index of the nearest centroid of each row, and its cosine (rows and centroids unit)."""
    sims = x @ cents.T
    best = np.argmax(sims, axis=1)
    return best.astype(np.int64), sims[np.arange(x.shape[0]), best].astype(np.float32)


def new_topic_id(tenant: str, project_id: str, members: Sequence[str], attempt: int = 0) -> str:
    """Deterministic from the cluster's first member, so a rebuild from scratch names a topic
    the way the first clustering did. ``attempt`` > 0 names it again when that id is taken
    (the smaller part of a split that kept the first member of the topic it split from)."""
    seed = f"{tenant}\x00{project_id}\x00{min(members)}"
    if attempt:
        seed += f"\x00{attempt}"
    return "topic:" + hashlib.blake2b(seed.encode(), digest_size=8).hexdigest()


@dataclass(frozen=True)
class Named:
    topic_id: str
    parent_ids: tuple[str, ...]  # old topics it shares members with, but did not inherit from


def match_ids(
    tenant: str,
    project_id: str,
    new: Mapping[int, set[str]],
    old: Mapping[str, set[str]],
) -> dict[int, Named]:
    """Name each new cluster: the old topic it shares most members with keeps its id.

    Greedy on the overlap count (largest first, ties by id), each old id used once: after a
    split the larger part keeps the id and the smaller gets a new one with the old id as its
    parent; after a merge the merged topic keeps the id of the larger old topic and names the
    other as a parent. A cluster sharing nothing with the past gets a new id.
    """
    pairs = sorted(
        (
            (len(members & before), old_id, c)
            for c, members in new.items()
            for old_id, before in old.items()
            if members & before
        ),
        key=lambda p: (-p[0], p[1], p[2]),
    )
    taken: dict[int, str] = {}
    used: set[str] = set()
    for _, old_id, c in pairs:
        if c in taken or old_id in used:
            continue
        taken[c] = old_id
        used.add(old_id)
    out: dict[int, Named] = {}
    for c, members in sorted(new.items()):
        overlapping = sorted(o for o, before in old.items() if members & before)
        if c in taken:
            tid = taken[c]
        else:
            tid, attempt = new_topic_id(tenant, project_id, sorted(members)), 0
            while tid in used:  # a new id must not collide with a surviving one
                attempt += 1
                tid = new_topic_id(tenant, project_id, sorted(members), attempt)
        used.add(tid)
        out[c] = Named(tid, tuple(o for o in overlapping if o != tid))
    return out


def related_edges(
    ids: Sequence[str],
    cents: Matrix,
    sessions: Sequence[set[str]],
    *,
    min_weight: float,
    per_topic: int,
) -> dict[tuple[str, str], float]:
    """Weighted topic-to-topic edges, symmetric: 0.7 x centroid cosine + 0.3 x the Jaccard of
    their sessions; an edge is kept when it is among either topic's ``per_topic`` strongest.

    Vectorised (a sparse topic x session incidence matrix), so thousands of topics take
    milliseconds, not the minutes of a pairwise loop."""
    n = len(ids)
    if n < 2:
        return {}
    from scipy.sparse import csr_matrix

    cos = np.clip(cents @ cents.T, 0.0, 1.0).astype(np.float64)
    index: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    for i, group in enumerate(sessions):
        for session in group:
            rows.append(i)
            cols.append(index.setdefault(session, len(index)))
    incidence = csr_matrix(
        (np.ones(len(rows), dtype=np.float64), (rows, cols)), shape=(n, max(len(index), 1))
    )
    inter = np.asarray((incidence @ incidence.T).todense(), dtype=np.float64)
    sizes = np.asarray([len(g) for g in sessions], dtype=np.float64)
    union = sizes[:, None] + sizes[None, :] - inter
    jac = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    weight = 0.7 * cos + 0.3 * jac
    np.fill_diagonal(weight, -1.0)
    k = min(per_topic, n - 1)
    top = np.argpartition(-weight, k - 1, axis=1)[:, :k]
    keep: set[tuple[int, int]] = set()
    for i in range(n):
        for j in top[i]:
            if weight[i, j] >= min_weight:
                keep.add((min(i, int(j)), max(i, int(j))))
    out: dict[tuple[str, str], float] = {}
    for i, j in keep:
        w = round(float(weight[i, j]), 4)
        out[(ids[i], ids[j])] = w
        out[(ids[j], ids[i])] = w
    return out
