"""Privacy primitives shared by every capability: noise sources, the typed mechanisms that
draw noise and state their cost, sensitivity, scale and accuracy, and the accountant that
records every mechanism of a release against its charge."""

from core.privacy.accountant import DRAWING, Accountant, Overdraw
from core.privacy.accuracy import (
    discrete_laplace_half_width,
    discrete_laplace_tail,
    laplace_half_width,
)
from core.privacy.cost import ZERO, Cost, RhoClaim
from core.privacy.gaussian import DiscreteGaussian, discrete_gaussian_half_width
from core.privacy.mechanisms import (
    DiscreteLaplace,
    Exponential,
    Laplace,
    LatticeLaplace,
    LossKind,
    Mechanism,
    MechanismKind,
    NoisyThreshold,
    PrivacyLoss,
)
from core.privacy.noise import SEEDED_LABEL, Noise
from core.privacy.pp_randomization import PPRandomization
from core.privacy.recorded import Recorded, from_json, same_mechanism
from core.privacy.unit import PrivacyUnit, UnitKind

__all__ = [
    "UnitKind",
    "DRAWING",
    "SEEDED_LABEL",
    "ZERO",
    "Accountant",
    "Cost",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "Exponential",
    "Laplace",
    "LossKind",
    "PrivacyLoss",
    "LatticeLaplace",
    "Mechanism",
    "MechanismKind",
    "Noise",
    "NoisyThreshold",
    "Overdraw",
    "PPRandomization",
    "PrivacyUnit",
    "Recorded",
    "RhoClaim",
    "discrete_gaussian_half_width",
    "discrete_laplace_half_width",
    "discrete_laplace_tail",
    "from_json",
    "laplace_half_width",
    "same_mechanism",
]
