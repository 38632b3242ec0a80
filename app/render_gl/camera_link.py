"""Linked cameras: a camera move in one view is mirrored in the others (on by default, unlinkable).

Direction, distance and field of view are copied as they are. The look-at centre is copied as an
offset from each view's own home centre, so views of clips standing at different places in their
camera spaces still show their own skeleton.
"""

from __future__ import annotations

from .skeleton_view import SkeletonView


class CameraLink:
    def __init__(self, views: list[SkeletonView], enabled: bool = True) -> None:
        self.views = list(views)
        self.enabled = enabled
        self._syncing = False
        for view in self.views:
            view.camera_changed.connect(lambda v=view: self._mirror(v))

    def set_enabled(self, enabled: bool, leader: SkeletonView | None = None) -> None:
        """Turning the link on aligns every view with `leader` (the first view by default)."""
        self.enabled = bool(enabled)
        if self.enabled:
            self._mirror(leader or self.views[0])

    def _mirror(self, leader: SkeletonView) -> None:
        if not self.enabled or self._syncing:
            return
        self._syncing = True
        try:
            offset = leader.opts["center"] - leader.home_center
            for view in self.views:
                if view is leader:
                    continue
                view.opts["fov"] = leader.opts["fov"]
                view.setCameraPosition(pos=view.home_center + offset, distance=leader.opts["distance"],
                                       elevation=leader.opts["elevation"], azimuth=leader.opts["azimuth"])
        finally:
            self._syncing = False
