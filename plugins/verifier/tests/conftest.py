import pytest

from ragplugins_verifier.fidelity import FidelityVerifier

# Evidence written for these tests (not benchmark data): two nodes of a fictional kiln manual
# and one of an unrelated travel policy.
KILN_SPECS = (
    "ORION-3 KILN - SERVICE NOTES\n"
    "1. SPECIFICATIONS\n"
    "The main chamber reaches 1,260 degrees Celsius during a glaze firing. "
    "The preheat chamber is held at 180 degrees Celsius.\n"
    "The blower motor is rated for 75 watts.\n"
    "2. MAINTENANCE\n"
    "Replace the door seal (part DS-448) every 18 months. "
    "Vacuum the element grooves every 30 firings.\n"
    "Thermocouples are not covered by the warranty.\n"
)
KILN_FAULTS = (
    "3. FAULT CODES\n"
    "F12: Element open circuit. Replace element part EL-207.\n"
    "F31: Door switch fault. Clean the switch contacts, then restart the controller.\n"
)
TRAVEL = (
    "Travel Policy TP-9\n"
    "Economy class is required for flights under 6 hours. Staff below Level 4 receive a daily allowance of "
    "45 EUR and staff at Level 4 and above receive 70 EUR.\n"
    "The policy was approved by the Finance Committee on 3 March 2025.\n"
)


class Texts:
    specs, faults, travel = KILN_SPECS, KILN_FAULTS, TRAVEL
    evidence = [{"id": "specs", "text": KILN_SPECS}, {"id": "faults", "text": KILN_FAULTS}]


@pytest.fixture(scope="session")
def texts():
    return Texts


@pytest.fixture(scope="session")
def fidelity(bundled_embed_model):
    return FidelityVerifier(embed_model=bundled_embed_model)
