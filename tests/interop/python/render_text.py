"""Renders a line of text into a PNG (for the OCR test): python render_text.py TEXT OUT.png"""
import sys

from PIL import Image, ImageDraw, ImageFont

text, out = sys.argv[1], sys.argv[2]
font = ImageFont.load_default(size=64)
left, top, right, bottom = font.getbbox(text)
img = Image.new("RGB", (right - left + 80, bottom - top + 80), "white")
ImageDraw.Draw(img).text((40 - left, 40 - top), text, fill="black", font=font)
img.save(out)
