"""robodyn: the library behind the textbook *Robot Dynamics, Interactively*.

One module per part of the book; the names below are the public API.

* :mod:`robodyn.kinematics` -- rigid motion, twists and wrenches, serial chains (Part I)
* :mod:`robodyn.models` -- the book's robots
* :mod:`robodyn.viz` -- figures, interactive figures and animations (the only module that
  imports matplotlib and ipywidgets; import it explicitly)
"""
import os as _os

from .kinematics import (SerialChain, ad, adjoint, exp_se3, exp_so3, fk_body, fk_space, hat,
                         homogeneous, inverse_homogeneous, is_rotation, jacobian_body,
                         jacobian_space, link_poses, log_se3, log_so3, prismatic_screw,
                         revolute_screw, rotation, spatial_inertia, transform_twist,
                         transform_wrench, vee)
from . import models

__version__ = "0.1.0"


def quick_mode() -> bool:
    """True when notebooks run as tests (``ROBODYN_QUICK=1``): long demos shorten themselves.

    >>> isinstance(quick_mode(), bool)
    True
    """
    return _os.environ.get("ROBODYN_QUICK", "") not in ("", "0")
