r"""Rigid motion (Part I of the book): rotations, homogeneous transforms, screws, twists and
wrenches, the exponential map, serial chains, their Jacobians and spatial inertias.

Its rooms (private modules, named by concept; import from here):

* ``_kinematics`` -- rotations, screws, twists and wrenches, serial chains and their Jacobians
* ``_inertia`` -- what a rotational and a spatial inertia are: their checks
"""

from ._kinematics import (hat, vee, exp_so3, log_so3, exp_se3, log_se3, rotation, homogeneous,
                          inverse_homogeneous, adjoint, ad, transform_twist, transform_wrench,
                          revolute_screw, prismatic_screw, spatial_inertia, is_rotation,
                          SerialChain, fk_space, fk_body, link_poses, jacobian_space,
                          jacobian_body, LongComputationWarning, SYMBOLIC_MAX_JOINTS,
                          SYMBOLIC_WARN_JOINTS)

__all__ = ["hat", "vee", "exp_so3", "log_so3", "exp_se3", "log_se3", "rotation", "homogeneous",
           "inverse_homogeneous", "adjoint", "ad", "transform_twist", "transform_wrench",
           "revolute_screw", "prismatic_screw", "spatial_inertia", "is_rotation", "SerialChain",
           "fk_space", "fk_body", "link_poses", "jacobian_space", "jacobian_body",
           "LongComputationWarning", "SYMBOLIC_MAX_JOINTS", "SYMBOLIC_WARN_JOINTS"]

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary: last, over the finished module
_seal(globals())
