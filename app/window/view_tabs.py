"""The tabs' views by name, each made when it is first needed.

A view costs its module's import and its construction (the tiling view works out its
tile maps, the code view its panels): a tenth of a second or more that the first paint
need not wait for, since only one tab is on screen. So the tab shown at the start gets
its view at once and every other tab a blank page; each page is swapped for its view when
anything asks for that view: a tab clicked or shown, a menu, a shortcut, an export, a
picture, a test (``views[name]``, ``views.values()``). Once the window has been painted,
the window makes the rest, one per turn of the event loop (:meth:`make_next`).

What the window tells every view (the selected level, animations on or off, the theme)
goes through :meth:`ViewTabs.tell`, which a view made later hears too, so a view made
late is the view it would have been had it been made at the start. The tab on screen
hears it at once; a hidden tab's view is owed it until it is shown or asked for
(``views[name]``, :meth:`ViewTabs.pay_all` before a screenshot or an export), so that
a level switch pays for the tab on screen, not for all nine (the roofline's labels, the
banks' counters and the code's SASS took most of a switch's 150-250 ms). What changed in
the store while a view was hidden or not made yet is owed to it the same way
(:class:`~gemmscope.app.window.redraw.ShownViews`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QTabWidget, QWidget

from ..views.base import View
from ..views.registry import ViewSpec


class ViewTabs(Mapping[str, View]):
    """``setup(name, view)`` readies a new view (binds the store and the links) before
    its tab holds it."""

    def __init__(self, tabs: QTabWidget, specs: Sequence[ViewSpec],
                 setup: Callable[[str, View], None]) -> None:
        self.tabs = tabs
        self._specs = {spec.name: spec for spec in specs}
        self._setup = setup
        self._made: dict[str, View] = {}
        self._pages: dict[str, QWidget] = {}  # a tab's blank page until its view is made
        self._told: dict[str, Callable[[View], object]] = {}
        self._owed: dict[str, set[str]] = {}  # per hidden view: what it was told meanwhile
        for spec in specs:
            page = QWidget()
            page.setObjectName(f"unmade_{spec.name}")
            self._pages[spec.name] = page
            tabs.addTab(page, spec.title)
            tabs.setTabToolTip(tabs.count() - 1, spec.tip)
        # before anyone else hears of a tab shown: they find its view in it
        tabs.currentChanged.connect(self._tab_shown)
        self._tab_shown(tabs.currentIndex())

    # ------------------------------------------------------------- Mapping
    def __getitem__(self, name: str) -> View:
        view = self._made.get(name)
        if view is None:
            if name not in self._specs:
                raise KeyError(name)
            view = self._make(name)
        else:
            self.pay(name)
        return view

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    # ------------------------------------------------------------- by name
    def widget_named(self, name: str) -> QWidget | None:
        """A view, or one of its charts, by name, its tab brought on screen (None: no
        view or chart has that name)."""
        if name in self:
            view = self[name]
            assert isinstance(view, QWidget)
            self.tabs.setCurrentWidget(view)
            return view
        for view in self.values():
            parts = view.charts()
            if name in parts:
                assert isinstance(view, QWidget)
                self.tabs.setCurrentWidget(view)
                return parts[name]
        return None

    def names(self) -> list[str]:
        """Every view's name, then its charts' (what :meth:`widget_named` finds)."""
        names = list(self)
        for view in self.values():
            names += list(view.charts())
        return names

    # ------------------------------------------------------------- made views
    @property
    def made(self) -> dict[str, View]:
        """The views made so far, in tab order (none is made by asking)."""
        return {name: self._made[name] for name in self._specs if name in self._made}

    def is_made(self, name: str) -> bool:
        return name in self._made

    def make_next(self) -> bool:
        """Make the first view not made yet, in tab order; False when all are made."""
        name = next((n for n in self._specs if n not in self._made), None)
        if name is None:
            return False
        self._make(name)
        return True

    def make_rest(self) -> None:
        """Make the views not made yet, one per turn of the event loop (so that a click or
        a key in between is not kept waiting for all of them)."""
        if self.make_next():
            QTimer.singleShot(0, self.tabs, self.make_rest)

    def tell(self, what: str, call: Callable[[View], object]) -> None:
        """Call ``call(view)`` on the view on screen now, on every other view made when it
        is shown or asked for, and on each view made later; a later ``tell`` of the same
        ``what`` (``"level"``, ``"theme"``) replaces it."""
        self._told.pop(what, None)
        self._told[what] = call
        shown = self.tabs.currentWidget()
        for name, view in self.made.items():
            if view is shown:
                call(view)
            else:
                self._owed.setdefault(name, set()).add(what)

    def pay(self, name: str) -> None:
        """Tell a made view what it was told while hidden (each what's latest call, in the
        order they were told)."""
        owed = self._owed.pop(name, None)
        if owed:
            view = self._made[name]
            for what, call in list(self._told.items()):
                if what in owed:
                    call(view)

    def pay_all(self) -> None:
        """Every made view up to date with what it was told (screenshots, exports)."""
        for name in list(self._owed):
            self.pay(name)

    def _make(self, name: str) -> View:
        spec = self._specs[name]
        view = spec.factory()
        assert isinstance(view, QWidget)
        self._made[name] = view
        self._owed.pop(name, None)  # (it hears everything told below)
        self._setup(name, view)
        for call in self._told.values():
            call(view)
        page = self._pages.pop(name)
        tabs = self.tabs
        index = tabs.indexOf(page)
        shown = tabs.currentIndex() == index
        # the view goes in before its page goes out, so no other tab is shown meanwhile;
        # the index shown stays the same, so nobody need hear of it
        blocked = tabs.blockSignals(True)
        try:
            tabs.insertTab(index, view, spec.title)
            tabs.setTabToolTip(index, spec.tip)
            if shown:
                tabs.setCurrentIndex(index)
            tabs.removeTab(index + 1)
        finally:
            tabs.blockSignals(blocked)
        page.deleteLater()
        return view

    def _tab_shown(self, index: int) -> None:
        page = self.tabs.widget(index)
        name = next((n for n, p in self._pages.items() if p is page), None)
        if name is not None:
            self._make(name)
            return
        name = next((n for n, v in self._made.items() if v is page), None)
        if name is not None:
            self.pay(name)


class FirstPaint(QObject):
    """Calls what :meth:`then` was given, once, on the turn of the event loop after the
    window's first paint (the first paint of any widget in it), or ``latest_ms`` after it
    was first shown where no paint came (a window shown but never exposed). From the
    window's first show until then it watches the application's events; a child of the
    window."""

    def __init__(self, window: QWidget, latest_ms: int = 1000) -> None:
        super().__init__(window)
        self.window = window
        self.calls: list[Callable[[], object]] = []
        self.latest_ms = latest_ms
        self.watching = False
        self.done = False
        window.installEventFilter(self)  # for its Show event

    def start(self) -> None:
        app = QApplication.instance()
        if self.done or self.watching or app is None:
            return
        self.window.removeEventFilter(self)
        self.watching = True
        app.installEventFilter(self)
        QTimer.singleShot(self.latest_ms, self, self._fire)

    def then(self, call: Callable[[], object]) -> None:
        """Call ``call()`` after the first paint (now, if that has passed)."""
        if self.done:
            call()
        else:
            self.calls.append(call)

    def stop(self) -> None:
        app = QApplication.instance()
        if self.watching and app is not None:
            app.removeEventFilter(self)
        self.watching = False

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.window and event.type() == QEvent.Type.Show:
            self.start()
        elif (event.type() == QEvent.Type.Paint and isinstance(obj, QWidget)
                and obj.window() is self.window):
            self.stop()
            QTimer.singleShot(0, self, self._fire)
        return False

    def _fire(self) -> None:
        if not self.done:
            self.done = True
            self.stop()
            calls, self.calls = self.calls, []
            for call in calls:
                call()
