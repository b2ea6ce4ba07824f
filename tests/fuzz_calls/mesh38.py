"""Valid calls of the meshes of robodyn.viz (TriangleMesh, read_mesh, Scene.mesh, Scene.robot)
for the API fuzzer: a tetrahedron in an OBJ file and a two-link URDF robot that carries it,
written into a temporary folder."""
import tempfile
from pathlib import Path

import numpy as np

from robodyn.viz import Scene
from robodyn.viz.meshes import TriangleMesh

_T = np.linspace(0.0, 1.0, 3)
_V = np.array([[0.0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]])
_F = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])

TETRAHEDRON_OBJ = ("v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\n"
                   "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n")

URDF = """<?xml version="1.0"?>
<robot name="two_links">
  <link name="base"><visual><geometry><mesh filename="tet.obj"/></geometry></visual>
    <collision><geometry><mesh filename="tet.obj" scale="2 2 2"/></geometry></collision>
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="arm"><visual><origin xyz="0 0 0.2" rpy="0 0 0"/><geometry><mesh filename="tet.obj"/></geometry></visual>
    <collision><geometry><mesh filename="tet.obj"/></geometry></collision>
    <inertial><origin xyz="0 0 0.2"/><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.1" rpy="0 0 0"/><axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
</robot>
"""


def write_two_links(folder):
    """The OBJ and the URDF above in ``folder``; the URDF's path."""
    folder = Path(folder)
    (folder / "tet.obj").write_text(TETRAHEDRON_OBJ)
    (folder / "two_links.urdf").write_text(URDF)
    return folder / "two_links.urdf"


_DIR = Path(tempfile.mkdtemp(prefix="rd-mesh38-"))
_URDF = write_two_links(_DIR)
_MODEL = []


def _model():
    if not _MODEL:
        from robodyn.urdf import load_urdf
        _MODEL.append(load_urdf(str(_URDF)))
    return _MODEL[0]


def _scene():
    return Scene(_T, title="t", alt="a scene")


CALLS = {
    "robodyn.viz.meshes.TriangleMesh": lambda: ((_V, _F), {}),
    "robodyn.viz.meshes.TriangleMesh.bounds": lambda: ((TriangleMesh(_V, _F),), {}),
    "robodyn.viz.meshes.read_mesh": lambda: ((_DIR / "tet.obj",), {"scale": [1.0, 2.0, 1.0],
                                                                    "max_faces": 10}),
    "robodyn.viz.Scene.mesh": lambda: ((_scene(), np.tile(np.eye(4), (3, 1, 1)),
                                        TriangleMesh(_V, _F)),
                                       {"name": "m", "color": "#123456", "opacity": 0.8}),
    "robodyn.viz.Scene.robot": lambda: ((_scene(), _model(), np.zeros((3, 1))),
                                        {"base_poses": np.eye(4), "meshes": "collision",
                                         "max_faces": 100, "color": "#aabbcc",
                                         "opacity": 1.0}),
    "robodyn.viz.Scene.to_plotly": lambda: ((_scene().line([[0.0, 0, 0], [1, 0, 0]]),),
                                            {"compact": True}),
}
