from django.contrib.auth.hashers import BCryptPasswordHasher

import peerdb


class BenchBCryptPasswordHasher(BCryptPasswordHasher):
    """Plain bcrypt ($2b$) at BCRYPT_COST (default 10), Gatehouse's cost."""

    rounds = peerdb.bcrypt_cost()
