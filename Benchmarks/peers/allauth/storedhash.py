"""Prints the stored password hash of the user with the given email (used by `peer.sh prepare`
to check the bcrypt cost)."""

import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchsite.settings")
import django  # noqa: E402

django.setup()
from django.contrib.auth import get_user_model  # noqa: E402

print(get_user_model().objects.get(email__iexact=sys.argv[1]).password)
