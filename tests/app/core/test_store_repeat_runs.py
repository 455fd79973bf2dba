"""The store's shortcut for a repeat of a run whose repeats came since the last other
event (SessionStore._on_repeat; a paired burst's two runs in turn): whatever comes between
repeats, a store with the shortcut holds
what a store without it holds (its streams, trial windows and run states), and it is
taken where it should be."""

from __future__ import annotations

import synthetic_session as syn
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gemmscope.app.core.repeat_stream import RepeatStream
from gemmscope.app.core.store import REPEAT_RUNS_KEPT, Change, SessionStore
from gemmscope.kernels.protocol.decoding import from_builtins
from gemmscope.kernels.protocol.timeline import Timeline


class WithoutShortcut(SessionStore):
    """Finds every repeat's run the whole way."""

    def handle(self, event) -> None:
        self._repeat_runs.clear()
        super().handle(event)


# a few runs, so that a run comes back after something else: (id, level, size, device);
# ids 1, True and 1.0 are == alike but not the same run (their reprs differ)
RUN = st.sampled_from([(1, "naive", 64, None), (1, "naive", 64, 1), (True, "naive", 64, None),
                       (1.0, "naive", 128, None), ("a", "coalesced", 64, None),
                       (1, "coalesced", 64, None)])
STEP = st.one_of(
    st.tuples(st.just("repeat"), RUN, st.integers(1, 6)),
    st.tuples(st.just("run_start"), RUN, st.sampled_from(["burst", "sustained"])),
    st.tuples(st.just("window"), RUN, st.just(0)),
    st.tuples(st.just("compiling"), RUN, st.just(0)),
    st.tuples(st.just("new_stream"), RUN, st.just(0)),
)


def events_of(steps) -> list:
    """The steps as events (a repeat step is several repeats in a row), one t apart; a
    ``new_stream`` step is not an event but the stream replaced from outside."""
    out, t, i = [syn.header()], 0.0, 0
    for kind, (run_id, level, n, device), extra in steps:
        where = {"id": run_id, "level": level, "M": n, "N": n, "K": n,
                 **({"device": device} if device is not None else {})}
        if kind == "repeat":
            for _ in range(extra):
                t, i = t + 0.01, i + 1
                out.append({"type": "repeat", "t": t, **where, "i": i, "ms": 1.0,
                            "tflops": float(i)})
        elif kind == "run_start":
            t += 0.01
            out.append({"type": "run_start", "t": t, **where, "dtype": "fp32",
                        "repeats": 4, "mode": extra})
        elif kind in ("window", "compiling"):
            t += 0.01
            out.append({"type": "phase", "t": t, "id": run_id, "phase": kind, "trial": 0,
                        "seconds": 0.5, **({"device": device} if device is not None else {})})
        else:
            out.append("new_stream")
    return out


def fed(store: SessionStore, events) -> SessionStore:
    line = Timeline()
    for ev in events:
        if ev == "new_stream":
            store.stream = RepeatStream()
        else:
            store.handle(line.place(from_builtins(ev)))
    return store


def picture(store: SessionStore) -> list:
    out = []
    for device in (0, 1):
        state = store._state(device)
        streams = {str(k): [a.tolist() for a in s.arrays()] for k, s in state.streams.items()}
        out.append((streams, [a.tolist() for a in state.stream.arrays()],
                    state.stream.level, state.stream.shape, list(state.trial_spans),
                    state.open_trial, state.doing))
    return out


A = (1, "naive", 64, None)


@settings(max_examples=300, deadline=None)
@given(st.lists(STEP, max_size=14))
@example([("repeat", A, 2), ("run_start", A, "burst"), ("repeat", A, 2)])  # a new run
@example([("repeat", A, 2), ("new_stream", A, 0), ("repeat", A, 2)])  # replaced from outside
@example([("run_start", (True, *A[1:]), "sustained"), ("repeat", A, 2),
          ("repeat", (True, *A[1:]), 2)])  # ids ==, two runs: the second's stream is its own
@example([("repeat", A, 1), ("repeat", (1, "coalesced", 64, None), 1), ("repeat", A, 1),
          ("repeat", (1, "coalesced", 64, None), 1)])  # a paired burst: two runs in turn
def test_a_store_with_the_shortcut_holds_what_one_without_it_holds(steps):
    events = events_of(steps)
    assert picture(fed(SessionStore(), events)) == picture(fed(WithoutShortcut(), events))


def test_the_shortcut_is_taken_for_a_run_of_repeats_and_says_the_stream_changed():
    store = fed(SessionStore(), events_of([("run_start", (7, "naive", 64, None), "burst"),
                                           ("repeat", (7, "naive", 64, None), 3)]))
    assert len(store._repeat_runs) == 1
    store.take_changes()
    line = Timeline()
    line.last_s = 10.0
    store.handle(from_builtins({"type": "repeat", "t": 11.0, "id": 7, "level": "naive",
                                "M": 64, "N": 64, "K": 64, "i": 4, "ms": 1.0,
                                "tflops": 4.0}))
    assert Change.STREAM in store.take_changes()
    assert store.stream.arrays()[1].tolist() == [1.0, 2.0, 3.0, 4.0]


def test_runs_of_one_repeat_each_keep_a_bounded_number_at_hand():
    steps = [("repeat", (f"run {k}", "naive", 64, None), 1) for k in range(100)]
    store = fed(SessionStore(), events_of(steps))
    assert 1 <= len(store._repeat_runs) <= REPEAT_RUNS_KEPT
    assert picture(store) == picture(fed(WithoutShortcut(), events_of(steps)))
