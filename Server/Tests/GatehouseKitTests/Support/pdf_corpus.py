"""The PDF signer's test corpus and its checks (PDFSignerTests), with the real tools.

  pdf_corpus.py make FOLDER
      writes the corpus, made at test time (nothing downloaded): reportlab.pdf (two pages, classic
      xref table), libreoffice.pdf (LibreOffice's --convert-to pdf, committed in Fixtures/), objstm.pdf (qpdf rewrites it with object streams and a cross-reference stream),
      updated.pdf (pypdf appends an incremental update to it first), rotated.pdf (page 1 turned
      90 degrees and page 2 180 degrees, with a crop box), encrypted.pdf (qpdf, AES-256) and
      photo.jpg (Pillow).
      Prints one JSON object: name -> path.

  pdf_corpus.py libreoffice FOLDER
      makes Fixtures/libreoffice.pdf again in FOLDER with LibreOffice (Debian's libreoffice-writer-nogui): the
      twenty clauses as a text file, converted by `soffice --headless --convert-to pdf`.

  pdf_corpus.py check ORIGINAL SIGNED PAGE X Y W H URI
      checks a signed file: the original bytes are its prefix, `qpdf --check` passes, pypdf sees
      exactly one new Link annotation with URI on page PAGE (from 0) at the rectangle, and
      pdftoppm's render of that page differs from the unsigned render inside the rectangle (the
      signature's pixels) and nowhere else. Prints one JSON object; exit status 0 when all pass.
"""
import io
import json
import os
import subprocess
import sys
import tempfile
import time


def make(folder):
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import RectangleObject

    os.makedirs(folder, exist_ok=True)
    paths = {}

    base = os.path.join(folder, "reportlab.pdf")
    c = canvas.Canvas(base, pagesize=A4, pageCompression=0)
    for page in range(2):
        c.setFont("Helvetica", 14)
        c.drawString(72, 770, f"Agreement, page {page + 1}")
        for line in range(30):
            c.drawString(72, 740 - line * 18, f"Clause {line + 1}: the parties agree to sign below." )
        # An unbalanced graphics state left by the page's own content.
        c.translate(50, 50)
        c.scale(0.5, 0.5)
        c.showPage()
    c.save()
    paths["reportlab"] = base

    # LibreOffice: a document converted as an office suite writes it (indirect stream lengths, PDF 1.6). Committed
    # (Fixtures/libreoffice.pdf, made by `pdf_corpus.py libreoffice FOLDER`; Fixtures/README.md says with what), so
    # that a test run needs no office suite.
    fixture = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Fixtures", "libreoffice.pdf")
    with open(fixture, "rb") as source, open(os.path.join(folder, "libreoffice.pdf"), "wb") as copy:
        copy.write(source.read())
    paths["libreoffice"] = os.path.join(folder, "libreoffice.pdf")

    objstm = os.path.join(folder, "objstm.pdf")
    subprocess.run(["qpdf", "--object-streams=generate", "--compress-streams=y", base, objstm], check=True)
    paths["objstm"] = objstm

    updated = os.path.join(folder, "updated.pdf")
    writer = PdfWriter(base, incremental=True)
    writer.add_metadata({"/Title": "Agreement (updated)"})
    with open(updated, "wb") as out:
        writer.write(out)
    with open(base, "rb") as a, open(updated, "rb") as b:
        assert b.read().startswith(a.read()), "pypdf did not write an incremental update"
    paths["updated"] = updated

    rotated = os.path.join(folder, "rotated.pdf")
    reader = PdfReader(base)
    writer = PdfWriter()
    for page in reader.pages:
        writer.add_page(page)
    writer.pages[0].rotate(90)
    writer.pages[1].rotate(180)
    writer.pages[1].cropbox = RectangleObject([20, 20, 575, 822])
    with open(rotated, "wb") as out:
        writer.write(out)
    paths["rotated"] = rotated

    from PIL import Image
    photo = os.path.join(folder, "photo.jpg")
    image = Image.new("RGB", (64, 48), (200, 60, 40))
    for i in range(48):
        image.putpixel((i, i), (20, 20, 200))
    image.save(photo, "JPEG", quality=90)
    paths["photo"] = photo

    encrypted = os.path.join(folder, "encrypted.pdf")
    subprocess.run(["qpdf", "--encrypt", "user", "owner", "256", "--", base, encrypted], check=True)
    paths["encrypted"] = encrypted
    print(json.dumps(paths))


def libreoffice(folder):
    """Fixtures/libreoffice.pdf made again: the text converted by LibreOffice (retried: soffice now and then exits 1
    on the first start with a new profile)."""
    os.makedirs(folder, exist_ok=True)
    text = os.path.join(folder, "libreoffice.txt")
    with open(text, "w") as f:
        f.write("Agreement\n\n" + "\n".join("Clause %d: the parties agree to sign below." % (i + 1) for i in range(20)) + "\n")
    profile = "file://" + os.path.join(os.path.abspath(folder), "lo-profile")
    for attempt in range(3):
        run = subprocess.run(["soffice", "--headless", "-env:UserInstallation=" + profile, "--convert-to", "pdf", "--outdir", folder, text],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        if run.returncode == 0 and os.path.exists(os.path.join(folder, "libreoffice.pdf")):
            return
        time.sleep(1)
    raise RuntimeError("soffice --convert-to pdf failed three times (status %d): %s" % (run.returncode, run.stdout))


def render(path, page, folder, name):
    prefix = os.path.join(folder, name)
    subprocess.run(["pdftoppm", "-cropbox", "-r", "36", "-f", str(page + 1), "-l", str(page + 1), "-gray", path, prefix], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    produced = sorted(f for f in os.listdir(folder) if f.startswith(name) and f.endswith(".pgm"))
    with open(os.path.join(folder, produced[-1]), "rb") as f:
        data = f.read()
    # P5 width height maxval, then bytes.
    parts = data.split(maxsplit=4)
    width, height = int(parts[1]), int(parts[2])
    pixels = parts[4] if len(parts[4]) == width * height else data[-width * height:]
    return width, height, pixels


def check(original, signed, page, x, y, w, h, uri):
    from pypdf import PdfReader

    result = {}
    with open(original, "rb") as a, open(signed, "rb") as b:
        before, after = a.read(), b.read()
    result["prefix"] = after.startswith(before) and len(after) > len(before)
    qpdf = subprocess.run(["qpdf", "--check", signed], capture_output=True, text=True)
    result["qpdf"] = qpdf.returncode == 0 and "No syntax or stream encoding errors" in qpdf.stdout
    result["qpdf_output"] = (qpdf.stdout + qpdf.stderr)[-600:]

    reader = PdfReader(io.BytesIO(after))
    links = []
    for index, p in enumerate(reader.pages):
        for annot in p.get("/Annots") or []:
            annot = annot.get_object()
            if annot.get("/Subtype") == "/Link" and "/A" in annot and annot["/A"].get("/URI") == uri:
                links.append((index, [float(v) for v in annot["/Rect"]]))
    result["links"] = links
    result["link"] = len(links) == 1 and links[0][0] == page and all(abs(a - b) < 0.01 for a, b in zip(links[0][1], [x, y, x + w, y + h]))

    # Where the rectangle is on the rendered page: user space -> the shown (rotated, cropped) page.
    p = reader.pages[page]
    crop = [float(v) for v in p.cropbox]
    rotation = (p.get("/Rotate") or 0) % 360
    with tempfile.TemporaryDirectory() as folder:
        bw, bh, before_pixels = render(original, page, folder, "before")
        aw, ah, after_pixels = render(signed, page, folder, "after")
    result["size"] = [aw, ah]
    if (bw, bh) != (aw, ah):
        result["render"] = False
        print(json.dumps(result))
        return 1
    cw, ch = crop[2] - crop[0], crop[3] - crop[1]

    def to_pixel(ux, uy):
        # Relative to the crop box, y up; then turned clockwise by the rotation; then pixels (y down).
        rx, ry = ux - crop[0], uy - crop[1]
        if rotation == 90:
            sx, sy, sw, sh = ry, cw - rx, ch, cw
        elif rotation == 180:
            sx, sy, sw, sh = cw - rx, ch - ry, cw, ch
        elif rotation == 270:
            sx, sy, sw, sh = ch - ry, rx, ch, cw
        else:
            sx, sy, sw, sh = rx, ry, cw, ch
        return sx / sw * aw, (1 - sy / sh) * ah

    corners = [to_pixel(x, y), to_pixel(x + w, y), to_pixel(x, y + h), to_pixel(x + w, y + h)]
    px0, px1 = min(c[0] for c in corners) - 2, max(c[0] for c in corners) + 2
    py0, py1 = min(c[1] for c in corners) - 2, max(c[1] for c in corners) + 2
    inside = outside = 0
    for row in range(ah):
        for col in range(aw):
            i = row * aw + col
            if abs(before_pixels[i] - after_pixels[i]) > 24:
                if px0 <= col <= px1 and py0 <= row <= py1:
                    inside += 1
                else:
                    outside += 1
    result["changed_inside"] = inside
    result["changed_outside"] = outside
    result["render"] = inside >= 10 and outside == 0
    ok = result["prefix"] and result["qpdf"] and result["link"] and result["render"]
    print(json.dumps(result))
    return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    elif sys.argv[1] == "libreoffice":
        libreoffice(sys.argv[2])
    else:
        a = sys.argv[2:]
        sys.exit(check(a[0], a[1], int(a[2]), float(a[3]), float(a[4]), float(a[5]), float(a[6]), a[7]))
