"""A small deal room whose documents point at each other in the ways real documents do."""

from __future__ import annotations

from pathlib import Path

import pytest

DEAL_ROOM = {
    "01_master_agreement.md": (
        "# Master Agreement\n\n"
        "This Master Agreement is made between Northwind Robotics GmbH and Helios Components B.V.\n\n"
        "## Section 1 Prices\n\nUnit prices are set out in Exhibit B - Pricing. Prices are fixed for twelve months.\n\n"
        "## Section 2 Security\n\nThe supplier follows the Information Security Addendum at all times.\n\n"
        "## Section 3 Liability\n\nLiability is capped as stated in Schedule 2 - Liability Limits.\n\n"
        "## Section 4 Quality\n\n4.3 Inspection. Incoming lots are inspected by the buyer on arrival.\n"),
    "02_exhibit_b_pricing.md": (
        "# Exhibit B - Pricing\n\n"
        "This exhibit forms part of the Master Agreement.\n\n"
        "The servo motor HX-220 costs 84.50 EUR per unit. Controller boards cost 31.20 EUR.\n"),
    "03_information_security_addendum.md": (
        "# Information Security Addendum\n\n"
        "Security incidents affecting buyer data must be reported within 48 hours. Portal passwords rotate "
        "every 90 days and access uses multi-factor authentication.\n"),
    "04_quality_plan.md": (
        "# Quality Plan\n\n"
        "This plan implements Section 4.3 of the Master Agreement. A lot is rejected when its defect rate "
        "exceeds 0.8 percent. Calibration records are kept for five years.\n"),
    "05_liability_memo.md": (
        "# Liability Memo\n\n"
        "Schedule 2 - Liability Limits of the Master Agreement caps the aggregate liability of either party "
        "at 2.5 million EUR per contract year, excluding gross negligence.\n"),
    "06_canteen_notice.md": (
        "# Canteen Notice\n\n"
        "The staff canteen closes at 14:30 on Fridays. Vegetarian dishes are served daily and the coffee "
        "machine is descaled every Monday.\n"),
}


def write_corpus(directory: Path, files: dict[str, str] = DEAL_ROOM) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(text, encoding="utf-8")
    return directory


@pytest.fixture(scope="session")
def deal_room(tmp_path_factory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("deal_room"))


@pytest.fixture(scope="session")
def deal_files() -> dict[str, str]:
    return dict(DEAL_ROOM)


@pytest.fixture(scope="session")
def corpus_writer():
    return write_corpus
