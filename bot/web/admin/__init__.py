"""The operator page ``/admin`` and ``python -m bot report``: which questions the documents do not answer.

- :mod:`.gaps`: the gaps read from store rows, each in its session;
- :mod:`.report`: store rows in, a :class:`Report` out (totals, gap groups in context, sections);
- :mod:`.report_text`, :mod:`.report_csv`: a report for a terminal and as CSV;
- :mod:`.shared_reports`: one build per window shared by concurrent views;
- :mod:`.clusters`: gaps filed by subject, then grouped by meaning (faiss k-means);
- :mod:`.charts`: every chart from one function and one template (``templates/chart.svg``);
- :mod:`.texts`: the page's words in English and Chinese;
- :mod:`.routes`: ``mount_admin`` (page, sign-in, JSON, CSV) behind the operator credential.

What other modules import is re-exported here. ``mount_admin`` imports the chat UI (for its
reading of Accept-Language, and with it Gradio) only when called, so ``bot report`` does not load Gradio.
"""

from __future__ import annotations

from bot.web.admin.clusters import Embeddings, cluster
from bot.web.admin.gaps import Gap
from bot.web.admin.report import CLUSTER_ITEMS, EMBED_PER_VIEW, Example, Group, Report, SectionRow, build_report
from bot.web.admin.report_csv import report_csv, safe_cell
from bot.web.admin.report_text import report_text
from bot.web.admin.routes import LoginThrottle, admin_key, mount_admin, section_titles

__all__ = [
    "CLUSTER_ITEMS",
    "EMBED_PER_VIEW",
    "Embeddings",
    "Example",
    "Gap",
    "Group",
    "LoginThrottle",
    "Report",
    "SectionRow",
    "admin_key",
    "build_report",
    "cluster",
    "mount_admin",
    "report_csv",
    "report_text",
    "safe_cell",
    "section_titles",
]
