"""Agreement of two blind labellers: KB3_DOCS=DIR python agree.py A B NAME [A B NAME ...]

holdout7's agreement (the same figures), with kb3's pages added to the headings it knows (another knowledge base's
pages: KB_NAME=kb4 KB3_DOCS=DIR, named as they sit under seeds/kb4/)."""

import glob
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "holdout7"))
import agree as holdout7  # noqa: E402

# kb3's pages, named as they sit under seeds/kb3/ (KB3_DOCS: the folder holding them)
NAME = os.environ.get("KB_NAME", "kb3")
for f in glob.glob(os.path.join(os.environ.get("KB3_DOCS", NAME + "/docs"), "*.md")):
    holdout7.heads[NAME + "/" + os.path.basename(f)] = [
        holdout7.norm(line.lstrip("#")) for line in open(f) if line.startswith("#")
    ]

for A, B, name in zip(sys.argv[1::3], sys.argv[2::3], sys.argv[3::3]):
    d = holdout7.agree(holdout7.units(A), holdout7.units(B), name)
    print("   disagreements at units", d)
