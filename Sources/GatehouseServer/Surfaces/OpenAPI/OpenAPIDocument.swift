/// The OpenAPI 3.1 document of every HTTP surface, served at `/openapi.json` (kept by hand, so it states the contract).
enum OpenAPIDocument {
    static let json = #"""
{
  "openapi": "3.1.0",
  "info": {
    "title": "Gatehouse",
    "version": "1.0.0",
    "description": "Gatehouse's HTTP surfaces. `/v1`: the JSON account API (JSON in and out, Bearer sessions, every error an RFC 9457 problem document). `/api`: the phone-first API (form parameters in, JSON out, errors as plain text with `X-Error-Code`). Operations: `/health`, `/metrics`. Every answer of a route carries `X-Request-Id`."
  },
  "tags": [
    {"name": "Sign-up", "description": "`/v1`: two-step sign-up by email or SMS code."},
    {"name": "Sessions", "description": "`/v1`: log in, list and end sessions."},
    {"name": "Recovery", "description": "`/v1`: password recovery by code."},
    {"name": "Account", "description": "`/v1`: my account, profile, email, phone and avatar."},
    {"name": "Phone accounts", "description": "`/api`: the phone-first API."},
    {"name": "Operations", "description": "Health, metrics and this document."}
  ],
  "paths": {
    "/": {
      "get": {
        "operationId": "getRoot",
        "summary": "Where to go next",
        "tags": ["Operations"],
        "security": [],
        "responses": {
          "200": {
            "description": "The server's name and the paths of this document, the health checks and the APIs.",
            "content": {"application/json": {"schema": {
              "type": "object",
              "required": ["name", "openapi", "health", "live", "apis"],
              "properties": {
                "name": {"type": "string"},
                "openapi": {"type": "string"},
                "health": {"type": "string"},
                "live": {"type": "string"},
                "apis": {"type": "array", "items": {"type": "string"}}
              }
            }, "example": {"name": "Gatehouse", "openapi": "/openapi.json", "health": "/health", "live": "/health/live", "apis": ["/api", "/v1", "/customer-gateway/customer"]}}}
          }
        }
      }
    },
    "/health": {
      "get": {
        "operationId": "getHealth",
        "summary": "Readiness check",
        "description": "Ready only when the database answers: a load balancer should not send traffic otherwise.",
        "tags": ["Operations"],
        "security": [],
        "responses": {
          "200": {
            "description": "Ready: the text `ok`.",
            "content": {"text/plain": {"schema": {"type": "string"}, "example": "ok"}}
          },
          "503": {
            "description": "The database does not answer: the text `database unavailable`.",
            "content": {"text/plain": {"schema": {"type": "string"}, "example": "database unavailable"}}
          }
        }
      }
    },
    "/health/live": {
      "get": {
        "operationId": "getLiveness",
        "summary": "Liveness check",
        "description": "The process answers HTTP; the database is not asked (use `/health` for readiness). Also the benchmarks' plaintext yardstick.",
        "tags": ["Operations"],
        "security": [],
        "responses": {
          "200": {
            "description": "Alive: the text `ok`.",
            "content": {"text/plain": {"schema": {"type": "string"}, "example": "ok"}}
          }
        }
      }
    },
    "/metrics": {
      "get": {
        "operationId": "getMetrics",
        "summary": "Prometheus metrics",
        "description": "Prometheus text exposition format (`text/plain; version=0.0.4`). The route exists only when metrics are enabled.",
        "tags": ["Operations"],
        "security": [],
        "responses": {
          "200": {"description": "The metrics.", "content": {"text/plain": {"schema": {"type": "string"}}}}
        }
      }
    },
    "/openapi.json": {
      "get": {
        "operationId": "getOpenAPIDocument",
        "summary": "This OpenAPI 3.1 document",
        "tags": ["Operations"],
        "security": [],
        "responses": {
          "200": {
            "description": "The OpenAPI 3.1 document of every HTTP surface.",
            "content": {"application/json": {"schema": {"type": "object"}}}
          }
        }
      }
    },
    "/v1/signup/code": {
      "post": {
        "operationId": "requestSignupCode",
        "summary": "Send a sign-up code to an email address or a phone",
        "description": "Exactly one of `email` or `phone`. An address that already has an account gets the same 202, and a \"you already have an account\" notice instead of a code.",
        "tags": ["Sign-up"],
        "security": [],
        "requestBody": {
          "required": true,
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CodeRequest"}}}
        },
        "responses": {
          "202": {
            "description": "The code was sent (or a notice, if the address is registered).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CodeSent"}}}
          },
          "400": {
            "description": "`missing_parameter`, `invalid_parameter`, `invalid_email`, `invalid_phone`, `field_too_long`, `malformed_body`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
          "429": {"$ref": "#/components/responses/TooManyRequests"},
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      }
    },
    "/v1/signup": {
      "post": {
        "operationId": "signUp",
        "summary": "Create the account with the code",
        "description": "The address is verified by the code, so the account starts with `emailConfirmed` (or `phoneVerified`) true. Answers a new session.",
        "tags": ["Sign-up"],
        "security": [],
        "requestBody": {
          "required": true,
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SignupRequest"}}}
        },
        "responses": {
          "201": {
            "description": "The account was created; a session for it.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AuthSession"}}}
          },
          "400": {
            "description": "`missing_parameter`, `invalid_parameter`, `invalid_email`, `invalid_phone`, `invalid_tag`, `weak_password`, `invalid_date`, `invalid_locale`, `field_too_long`, `invalid_code`, `code_expired`, `code_attempts_exhausted`, `malformed_body`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "409": {
            "description": "`tag_taken`, `email_taken`, `phone_taken`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
          "429": {"$ref": "#/components/responses/TooManyRequests"},
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      }
    },
    "/v1/tags/{tag}": {
      "get": {
        "operationId": "getTagAvailability",
        "summary": "Whether a tag is free",
        "tags": ["Sign-up"],
        "security": [],
        "parameters": [
          {
            "name": "tag",
            "in": "path",
            "required": true,
            "description": "The tag (capitals are accepted; a leading `@` too, if not percent-encoded).",
            "schema": {"type": "string", "pattern": "^(?=[0-9_.]*[A-Za-z])[A-Za-z0-9_.]{3,32}$"}
          }
        ],
        "responses": {
          "200": {
            "description": "The tag as it would be stored, and whether it is free.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TagAvailability"}}}
          },
          "400": {
            "description": "`invalid_tag`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      }
    },
    "/v1/sessions": {
      "get": {
        "operationId": "listSessions",
        "summary": "List my sessions",
        "tags": ["Sessions"],
        "security": [{"bearerAuth": []}],
        "responses": {
          "200": {
            "description": "My sessions, newest first.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionList"}}}
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      },
      "post": {
        "operationId": "logIn",
        "summary": "Log in",
        "description": "`identifier` is an email, a tag or a phone. Unknown account and wrong password give the same 400 `invalid_credentials`.",
        "tags": ["Sessions"],
        "security": [],
        "requestBody": {
          "required": true,
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/LoginRequest"}}}
        },
        "responses": {
          "201": {
            "description": "A new session.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AuthSession"}}}
          },
          "400": {
            "description": "`invalid_credentials`, `missing_parameter`, `field_too_long`, `malformed_body`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
          "429": {"$ref": "#/components/responses/TooManyRequests"},
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      },
      "delete": {
        "operationId": "revokeOtherSessions",
        "summary": "End all my sessions but this one",
        "tags": ["Sessions"],
        "security": [{"bearerAuth": []}],
        "parameters": [
          {
            "name": "scope",
            "in": "query",
            "required": true,
            "description": "Which sessions to end: `others` (all but the current one).",
            "schema": {"type": "string", "enum": ["others"]}
          }
        ],
        "responses": {
          "200": {
            "description": "How many sessions were ended.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionsRevoked"}}}
          },
          "400": {
            "description": "`invalid_parameter`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      }
    },
    "/v1/sessions/current": {
      "delete": {
        "operationId": "logOut",
        "summary": "Log out (end the session making the request)",
        "tags": ["Sessions"],
        "security": [{"bearerAuth": []}],
        "responses": {
          "204": {"description": "The session is over."},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      }
    },
    "/v1/sessions/{id}": {
      "delete": {
        "operationId": "revokeSession",
        "summary": "End one of my sessions",
        "description": "Another account's session id is 404 `session_not_found`.",
        "tags": ["Sessions"],
        "security": [{"bearerAuth": []}],
        "parameters": [
          {
            "name": "id",
            "in": "path",
            "required": true,
            "description": "The session's id.",
            "schema": {"type": "string", "format": "uuid"}
          }
        ],
        "responses": {
          "204": {"description": "The session is over."},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {
            "description": "`session_not_found`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      }
    },
    "/v1/recovery/code": {
      "post": {
        "operationId": "requestRecoveryCode",
        "summary": "Send a password-recovery code",
        "description": "Always 202: an unknown or unconfirmed address is sent nothing.",
        "tags": ["Recovery"],
        "security": [],
        "requestBody": {
          "required": true,
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CodeRequest"}}}
        },
        "responses": {
          "202": {
            "description": "The code was sent (if the address belongs to an account).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CodeSent"}}}
          },
          "400": {
            "description": "`missing_parameter`, `invalid_parameter`, `invalid_email`, `invalid_phone`, `field_too_long`, `malformed_body`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
          "429": {"$ref": "#/components/responses/TooManyRequests"},
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      }
    },
    "/v1/recovery": {
      "post": {
        "operationId": "recoverPassword",
        "summary": "Set a new password with the recovery code",
        "description": "Ends every session of the account and mails a notice.",
        "tags": ["Recovery"],
        "security": [],
        "requestBody": {
          "required": true,
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RecoveryRequest"}}}
        },
        "responses": {
          "204": {"description": "The password was changed."},
          "400": {
            "description": "`missing_parameter`, `invalid_parameter`, `invalid_email`, `invalid_phone`, `invalid_code`, `code_expired`, `code_attempts_exhausted`, `weak_password`, `field_too_long`, `malformed_body`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
          "429": {"$ref": "#/components/responses/TooManyRequests"},
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      }
    },
    "/v1/me": {
      "get": {
        "operationId": "getAccount",
        "summary": "My account",
        "tags": ["Account"],
        "security": [{"bearerAuth": []}],
        "responses": {
          "200": {
            "description": "My account.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Account"}}}
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      },
      "patch": {
        "operationId": "updateProfile",
        "summary": "Edit my profile (JSON merge patch)",
        "description": "A member left out is unchanged, `null` clears it; `tag` cannot be cleared. An empty body changes nothing.",
        "tags": ["Account"],
        "security": [{"bearerAuth": []}],
        "requestBody": {
          "required": false,
          "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/ProfileUpdate"}},
            "application/merge-patch+json": {"schema": {"$ref": "#/components/schemas/ProfileUpdate"}}
          }
        },
        "responses": {
          "200": {
            "description": "The updated account.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Account"}}}
          },
          "400": {
            "description": "`invalid_tag`, `invalid_date`, `invalid_locale`, `invalid_parameter`, `field_too_long`, `malformed_body`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "409": {
            "description": "`tag_taken`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      }
    },
    "/v1/me/password": {
      "post": {
        "operationId": "changePassword",
        "summary": "Change my password",
        "description": "Needs the current password; ends every other session.",
        "tags": ["Account"],
        "security": [{"bearerAuth": []}],
        "requestBody": {
          "required": true,
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PasswordChange"}}}
        },
        "responses": {
          "204": {"description": "The password was changed."},
          "400": {
            "description": "`invalid_credentials`, `weak_password`, `missing_parameter`, `field_too_long`, `malformed_body`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
          "429": {"$ref": "#/components/responses/TooManyRequests"},
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      }
    },
    "/v1/me/email": {
      "post": {
        "operationId": "requestEmailChange",
        "summary": "Start an email change",
        "description": "Needs the current password. The new address becomes pending and gets a code; the old address keeps working and is told of the change. Verifying the code ends every other session.",
        "tags": ["Account"],
        "security": [{"bearerAuth": []}],
        "requestBody": {
          "required": true,
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EmailChangeRequest"}}}
        },
        "responses": {
          "202": {
            "description": "A code was sent to the new address.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CodeSent"}}}
          },
          "400": {
            "description": "`invalid_email`, `email_unchanged`, `current_password_required`, `invalid_credentials`, `missing_parameter`, `field_too_long`, `malformed_body`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "409": {
            "description": "`email_taken`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
          "429": {"$ref": "#/components/responses/TooManyRequests"},
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      },
      "delete": {
        "operationId": "cancelEmailChange",
        "summary": "Cancel the pending email change",
        "tags": ["Account"],
        "security": [{"bearerAuth": []}],
        "responses": {
          "200": {
            "description": "The account, without a pending address.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Account"}}}
          },
          "400": {
            "description": "`no_pending_email`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      }
    },
    "/v1/me/email/verify": {
      "post": {
        "operationId": "verifyEmailChange",
        "summary": "Confirm the new address with its code",
        "description": "Switches over to the pending address.",
        "tags": ["Account"],
        "security": [{"bearerAuth": []}],
        "requestBody": {
          "required": true,
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EmailCodeVerification"}}}
        },
        "responses": {
          "200": {
            "description": "The account with the new address.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Account"}}}
          },
          "400": {
            "description": "`no_pending_email`, `invalid_code`, `code_expired`, `code_attempts_exhausted`, `missing_parameter`, `field_too_long`, `malformed_body`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "409": {
            "description": "`email_taken`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
          "429": {"$ref": "#/components/responses/TooManyRequests"},
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      }
    },
    "/v1/me/phone": {
      "post": {
        "operationId": "requestPhoneVerification",
        "summary": "Send an SMS code to attach a phone",
        "tags": ["Account"],
        "security": [{"bearerAuth": []}],
        "requestBody": {
          "required": true,
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PhoneVerificationRequest"}}}
        },
        "responses": {
          "202": {
            "description": "A code was sent to the phone.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CodeSent"}}}
          },
          "400": {
            "description": "`invalid_phone`, `phone_already_verified`, `phone_country_not_allowed`, `current_password_required`, `invalid_credentials`, `missing_parameter`, `field_too_long`, `malformed_body`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "409": {
            "description": "`phone_taken`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
          "429": {"$ref": "#/components/responses/TooManyRequests"},
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      }
    },
    "/v1/me/phone/verify": {
      "post": {
        "operationId": "verifyPhone",
        "summary": "Attach the phone with its code",
        "tags": ["Account"],
        "security": [{"bearerAuth": []}],
        "requestBody": {
          "required": true,
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PhoneCodeVerification"}}}
        },
        "responses": {
          "200": {
            "description": "The account with the phone attached as verified.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Account"}}}
          },
          "400": {
            "description": "`missing_parameter`, `invalid_phone`, `invalid_code`, `code_expired`, `code_attempts_exhausted`, `field_too_long`, `malformed_body`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "409": {
            "description": "`phone_taken`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
          "429": {"$ref": "#/components/responses/TooManyRequests"},
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      }
    },
    "/v1/me/avatar": {
      "put": {
        "operationId": "uploadAvatar",
        "summary": "Set my avatar",
        "description": "The account's `avatarUrl` then points at `GET /v1/avatars/{id}`, a public, immutable URL that changes with each upload.",
        "tags": ["Account"],
        "security": [{"bearerAuth": []}],
        "requestBody": {
          "description": "The image as the raw body; its type in `Content-Type`, and the bytes must be that format. At most `GATEHOUSE_AVATAR_MAX_BYTES` (2 MiB by default).",
          "required": true,
          "content": {
            "image/png": {"schema": {"type": "string", "contentMediaType": "image/png"}},
            "image/jpeg": {"schema": {"type": "string", "contentMediaType": "image/jpeg"}},
            "image/gif": {"schema": {"type": "string", "contentMediaType": "image/gif"}},
            "image/webp": {"schema": {"type": "string", "contentMediaType": "image/webp"}}
          }
        },
        "responses": {
          "200": {
            "description": "The account with its new `avatarUrl`.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Account"}}}
          },
          "400": {
            "description": "`invalid_image`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      },
      "delete": {
        "operationId": "deleteAvatar",
        "summary": "Remove my avatar",
        "tags": ["Account"],
        "security": [{"bearerAuth": []}],
        "responses": {
          "200": {
            "description": "The account without an avatar.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Account"}}}
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      }
    },
    "/v1/avatars/{id}": {
      "get": {
        "operationId": "getAvatar",
        "summary": "An avatar image",
        "description": "Public and immutable: a new upload gets a new id.",
        "tags": ["Account"],
        "security": [],
        "parameters": [
          {
            "name": "id",
            "in": "path",
            "required": true,
            "description": "The avatar's id, from `avatarUrl`.",
            "schema": {"type": "string", "format": "uuid"}
          }
        ],
        "responses": {
          "200": {
            "description": "The image.",
            "content": {
              "image/png": {"schema": {"type": "string", "contentMediaType": "image/png"}},
              "image/jpeg": {"schema": {"type": "string", "contentMediaType": "image/jpeg"}},
              "image/gif": {"schema": {"type": "string", "contentMediaType": "image/gif"}},
              "image/webp": {"schema": {"type": "string", "contentMediaType": "image/webp"}}
            }
          },
          "404": {
            "description": "`not_found`.",
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "default": {"$ref": "#/components/responses/UnexpectedProblem"}
        }
      }
    },
    "/api/users/sms": {
      "post": {
        "operationId": "phoneSendSignupCode",
        "summary": "Send a sign-up code by SMS",
        "tags": ["Phone accounts"],
        "security": [],
        "parameters": [{"$ref": "#/components/parameters/AcceptLanguage"}],
        "requestBody": {
          "description": "Also read as a flat JSON object (`application/json`; numbers and booleans taken as text) or from the query string.",
          "required": true,
          "content": {
            "application/x-www-form-urlencoded": {"schema": {"$ref": "#/components/schemas/PhoneSendSMSForm"}},
            "multipart/form-data": {"schema": {"$ref": "#/components/schemas/PhoneSendSMSForm"}}
          }
        },
        "responses": {
          "200": {"description": "Done; empty body."},
          "400": {
            "description": "A refusal: `missing_parameter`, `invalid_phone`, `phone_taken`, `delivery_failed`, `field_too_long`, `body_too_large`, `malformed_body`. Plain-text message (Russian by default, English with `Accept-Language: en`).",
            "headers": {"X-Error-Code": {"$ref": "#/components/headers/XErrorCode"}},
            "content": {"text/plain": {"schema": {"type": "string"}}}
          },
          "429": {"$ref": "#/components/responses/PhoneTooManyRequests"},
          "500": {"$ref": "#/components/responses/PhoneServerError"}
        }
      }
    },
    "/api/users/register": {
      "post": {
        "operationId": "phoneRegister",
        "summary": "Create the account with the SMS code",
        "description": "The form is checked before the code, so a typo in the form does not cost a code attempt.",
        "tags": ["Phone accounts"],
        "security": [],
        "parameters": [{"$ref": "#/components/parameters/AcceptLanguage"}],
        "requestBody": {
          "description": "Also read as a flat JSON object (`application/json`; numbers and booleans taken as text) or from the query string.",
          "required": true,
          "content": {
            "application/x-www-form-urlencoded": {"schema": {"$ref": "#/components/schemas/PhoneRegisterForm"}},
            "multipart/form-data": {"schema": {"$ref": "#/components/schemas/PhoneRegisterForm"}}
          }
        },
        "responses": {
          "200": {
            "description": "The login, plus `password` when the server generated it.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PhoneRegisterResponse"}}}
          },
          "400": {
            "description": "A refusal: `missing_parameter`, `invalid_phone`, `invalid_login`, `invalid_email`, `invalid_date`, `weak_password`, `phone_taken`, `login_taken`, `email_taken`, `invalid_code`, `code_expired`, `code_attempts_exhausted`, `field_too_long`, `body_too_large`, `malformed_body`. Plain-text message (Russian by default, English with `Accept-Language: en`).",
            "headers": {"X-Error-Code": {"$ref": "#/components/headers/XErrorCode"}},
            "content": {"text/plain": {"schema": {"type": "string"}}}
          },
          "500": {"$ref": "#/components/responses/PhoneServerError"}
        }
      }
    },
    "/api/auth/login": {
      "post": {
        "operationId": "phoneLogin",
        "summary": "Get a session token",
        "tags": ["Phone accounts"],
        "security": [],
        "parameters": [{"$ref": "#/components/parameters/AcceptLanguage"}],
        "requestBody": {
          "description": "Also read as a flat JSON object (`application/json`; numbers and booleans taken as text) or from the query string.",
          "required": true,
          "content": {
            "application/x-www-form-urlencoded": {"schema": {"$ref": "#/components/schemas/PhoneLoginForm"}},
            "multipart/form-data": {"schema": {"$ref": "#/components/schemas/PhoneLoginForm"}}
          }
        },
        "responses": {
          "200": {
            "description": "A session token and when it expires.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PhoneLoginResponse"}}}
          },
          "400": {
            "description": "A refusal: `missing_parameter`, `invalid_credentials`, `field_too_long`, `body_too_large`, `malformed_body`. Plain-text message (Russian by default, English with `Accept-Language: en`).",
            "headers": {"X-Error-Code": {"$ref": "#/components/headers/XErrorCode"}},
            "content": {"text/plain": {"schema": {"type": "string"}}}
          },
          "429": {"$ref": "#/components/responses/PhoneTooManyRequests"},
          "500": {"$ref": "#/components/responses/PhoneServerError"}
        }
      }
    },
    "/api/auth/logout": {
      "post": {
        "operationId": "phoneLogout",
        "summary": "End the session",
        "tags": ["Phone accounts"],
        "security": [{"bearerAuth": []}],
        "parameters": [{"$ref": "#/components/parameters/AcceptLanguage"}],
        "responses": {
          "200": {"description": "Done; empty body. The token stops working at once."},
          "401": {"$ref": "#/components/responses/PhoneUnauthorized"},
          "500": {"$ref": "#/components/responses/PhoneServerError"}
        }
      }
    },
    "/api/users/user": {
      "get": {
        "operationId": "phoneGetUser",
        "summary": "The current user",
        "tags": ["Phone accounts"],
        "security": [{"bearerAuth": []}],
        "parameters": [{"$ref": "#/components/parameters/AcceptLanguage"}],
        "responses": {
          "200": {
            "description": "The current user.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PhoneUser"}}}
          },
          "401": {"$ref": "#/components/responses/PhoneUnauthorized"},
          "500": {"$ref": "#/components/responses/PhoneServerError"}
        }
      }
    },
    "/api/users/change": {
      "post": {
        "operationId": "phoneChangeProfile",
        "summary": "Edit the profile",
        "description": "If the current address is confirmed, a new one stays pending until confirmed: the user shows it with `isConfirmed=false`; sending the old address again cancels.",
        "tags": ["Phone accounts"],
        "security": [{"bearerAuth": []}],
        "parameters": [{"$ref": "#/components/parameters/AcceptLanguage"}],
        "requestBody": {
          "description": "Also read as a flat JSON object (`application/json`; numbers and booleans taken as text) or from the query string.",
          "required": false,
          "content": {
            "application/x-www-form-urlencoded": {"schema": {"$ref": "#/components/schemas/PhoneChangeForm"}},
            "multipart/form-data": {"schema": {"$ref": "#/components/schemas/PhoneChangeForm"}}
          }
        },
        "responses": {
          "200": {
            "description": "The updated user.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PhoneUser"}}}
          },
          "400": {
            "description": "A refusal: `invalid_email`, `email_taken`, `invalid_date`, `invalid_phone`, `phone_change_not_allowed`, `missing_parameter`, `field_too_long`, `body_too_large`, `malformed_body`. Plain-text message (Russian by default, English with `Accept-Language: en`).",
            "headers": {"X-Error-Code": {"$ref": "#/components/headers/XErrorCode"}},
            "content": {"text/plain": {"schema": {"type": "string"}}}
          },
          "401": {"$ref": "#/components/responses/PhoneUnauthorized"},
          "500": {"$ref": "#/components/responses/PhoneServerError"}
        }
      }
    },
    "/api/users/send-confirm": {
      "post": {
        "operationId": "phoneSendEmailConfirmation",
        "summary": "Mail a confirmation link",
        "description": "Sends a link to the address `GET /api/users/user` shows.",
        "tags": ["Phone accounts"],
        "security": [{"bearerAuth": []}],
        "parameters": [{"$ref": "#/components/parameters/AcceptLanguage"}],
        "responses": {
          "200": {
            "description": "The JSON string `\"ok\"`.",
            "content": {"application/json": {"schema": {"type": "string", "const": "ok"}}}
          },
          "400": {
            "description": "A refusal: `no_email`, `email_already_confirmed`, `delivery_failed`. Plain-text message (Russian by default, English with `Accept-Language: en`).",
            "headers": {"X-Error-Code": {"$ref": "#/components/headers/XErrorCode"}},
            "content": {"text/plain": {"schema": {"type": "string"}}}
          },
          "401": {"$ref": "#/components/responses/PhoneUnauthorized"},
          "429": {"$ref": "#/components/responses/PhoneTooManyRequests"},
          "500": {"$ref": "#/components/responses/PhoneServerError"}
        }
      }
    },
    "/api/users/confirm": {
      "get": {
        "operationId": "phoneConfirmEmail",
        "summary": "Open the link of a confirmation mail (browser)",
        "description": "Answers a small HTML page in the browser's language (no `X-Error-Code`) that shows the address and a button; opening the link changes nothing (a mail filter that fetches links confirms nobody). The button posts to the same path. The link is valid 24 h and works once.",
        "tags": ["Phone accounts"],
        "security": [],
        "parameters": [
          {
            "name": "id",
            "in": "query",
            "required": true,
            "description": "The token from the mail's link (43 base64url characters).",
            "schema": {"type": "string", "minLength": 1, "maxLength": 128, "pattern": "^[A-Za-z0-9_-]+$"}
          },
          {"$ref": "#/components/parameters/AcceptLanguage"}
        ],
        "responses": {
          "200": {
            "description": "The address is confirmed (`data-state=\"confirmed\"`), or was already (`already`: a used link opened again).",
            "content": {"text/html": {"schema": {"type": "string"}}}
          },
          "400": {
            "description": "An unknown or expired link, or one for an address the account no longer shows (`data-state=\"invalid\"`).",
            "content": {"text/html": {"schema": {"type": "string"}}}
          },
          "500": {"$ref": "#/components/responses/PhoneServerError"}
        }
      },
      "post": {
        "operationId": "phoneConfirmEmailPress",
        "summary": "Confirm the address (the page's button)",
        "description": "Confirms the address of the link whose token is posted (form field `id`, or the query as in the link). Answers the same HTML page with `data-state` `confirmed`, `already` or `invalid`.",
        "tags": ["Phone accounts"],
        "security": [],
        "parameters": [
          {
            "name": "id",
            "in": "query",
            "required": false,
            "description": "The token, when not in the body.",
            "schema": {"type": "string", "maxLength": 128}
          },
          {"$ref": "#/components/parameters/AcceptLanguage"}
        ],
        "requestBody": {
          "required": false,
          "content": {
            "application/x-www-form-urlencoded": {
              "schema": {"type": "object", "properties": {"id": {"type": "string", "maxLength": 128}}}
            }
          }
        },
        "responses": {
          "200": {
            "description": "Confirmed (`data-state=\"confirmed\"`), or already (`already`).",
            "content": {"text/html": {"schema": {"type": "string"}}}
          },
          "400": {
            "description": "An unknown, expired or stale link (`data-state=\"invalid\"`).",
            "content": {"text/html": {"schema": {"type": "string"}}}
          },
          "500": {"$ref": "#/components/responses/PhoneServerError"}
        }
      }
    },
    "/api/users/restore": {
      "post": {
        "operationId": "phoneRestorePassword",
        "summary": "Send a temporary password",
        "description": "The temporary password is valid 60 min; the old password keeps working until the temporary one is used to log in, which makes it the password and ends every other session.",
        "tags": ["Phone accounts"],
        "security": [],
        "parameters": [{"$ref": "#/components/parameters/AcceptLanguage"}],
        "requestBody": {
          "description": "Also read as a flat JSON object (`application/json`; numbers and booleans taken as text) or from the query string.",
          "required": true,
          "content": {
            "application/x-www-form-urlencoded": {"schema": {"$ref": "#/components/schemas/PhoneRestoreForm"}},
            "multipart/form-data": {"schema": {"$ref": "#/components/schemas/PhoneRestoreForm"}}
          }
        },
        "responses": {
          "200": {"description": "Done; empty body."},
          "400": {
            "description": "A refusal: `missing_parameter`, `invalid_parameter`, `account_not_found`, `no_email`, `email_not_confirmed`, `no_phone`, `delivery_failed`, `field_too_long`, `body_too_large`, `malformed_body`. Plain-text message (Russian by default, English with `Accept-Language: en`).",
            "headers": {"X-Error-Code": {"$ref": "#/components/headers/XErrorCode"}},
            "content": {"text/plain": {"schema": {"type": "string"}}}
          },
          "429": {"$ref": "#/components/responses/PhoneTooManyRequests"},
          "500": {"$ref": "#/components/responses/PhoneServerError"}
        }
      }
    }
  },
  "components": {
    "schemas": {
      "Timestamp": {
        "type": "string",
        "format": "date-time",
        "description": "ISO 8601 instant in UTC, whole seconds (`2026-11-22T10:00:00Z`)."
      },
      "ErrorCode": {
        "type": "string",
        "description": "A stable, machine-readable error code (`GatehouseErrorCode`): the `code` member of a problem document on `/v1`, the `X-Error-Code` header on `/api`. The set is open: a client must accept codes it does not know. Known codes: input: `missing_parameter`, `invalid_parameter`, `invalid_phone`, `invalid_email`, `invalid_date`, `invalid_login`, `weak_password`, `field_too_long`, `body_too_large`, `malformed_body`, `unsupported_media_type`, `invalid_tag`, `invalid_locale`, `invalid_image`; accounts: `phone_taken`, `email_taken`, `login_taken`, `invalid_credentials`, `account_not_found`, `no_email`, `email_already_confirmed`, `email_not_confirmed`, `no_phone`, `phone_change_not_allowed`, `tag_taken`, `email_unchanged`, `phone_already_verified`, `no_pending_email`, `current_password_required`, `phone_country_not_allowed`; codes: `invalid_code`, `code_expired`, `code_attempts_exhausted`; limits: `rate_limited`, `resend_too_soon`; sessions: `unauthorized`, `session_not_found`; delivery: `delivery_failed`; server: `internal_error`, `not_found`, `method_not_allowed`.",
        "examples": ["invalid_code"]
      },
      "Problem": {
        "type": "object",
        "description": "An RFC 9457 problem document (`application/problem+json`): the body of every `/v1` error.",
        "required": ["type", "title", "status", "detail", "code"],
        "properties": {
          "type": {"type": "string", "description": "`urn:gatehouse:problem:<code>`."},
          "title": {"type": "string", "description": "The HTTP reason phrase."},
          "status": {"type": "integer", "minimum": 100, "maximum": 599, "description": "The HTTP status code."},
          "detail": {
            "type": "string",
            "description": "What went wrong, in the request's language (`Accept-Language`: `en` or `ru`; English by default)."
          },
          "code": {"$ref": "#/components/schemas/ErrorCode", "description": "The stable machine-readable code."},
          "field": {"type": "string", "description": "The request member at fault, when one is."},
          "attemptsLeft": {
            "type": "integer",
            "minimum": 0,
            "description": "Wrong tries left on the code, with `invalid_code`."
          },
          "retryAfter": {
            "type": "integer",
            "minimum": 0,
            "description": "Seconds to wait, with `rate_limited` and `resend_too_soon` (also in `Retry-After`)."
          }
        },
        "examples": [
          {
            "code": "invalid_code",
            "detail": "Wrong code.",
            "status": 400,
            "title": "Bad Request",
            "type": "urn:gatehouse:problem:invalid_code",
            "attemptsLeft": 4
          }
        ]
      },
      "CodeChannel": {"type": "string", "enum": ["email", "sms"], "description": "Where a one-time code goes."},
      "CodeRequest": {
        "type": "object",
        "description": "Exactly one of `email` or `phone` (neither is 400 `missing_parameter`, both `invalid_parameter`).",
        "properties": {
          "email": {
            "type": "string",
            "format": "email",
            "maxLength": 254,
            "pattern": "^(?=[^@]{1,64}@)[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+(?:[A-Za-z]{2,63}|[Xx][Nn]--[A-Za-z0-9-]{0,58}[A-Za-z0-9])$",
            "description": "An email address, trimmed and lower-cased by the server: a dot-atom local part (no quoted strings) and a domain name (no address literals) of two labels or more."
          },
          "phone": {
            "type": "string",
            "maxLength": 32,
            "pattern": "^(?:\\+[-(). ]{0,2}(?:7[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|[1-689][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){7,14})|[-(). ]{0,2}(?:0[-(). ]{0,2}0[-(). ]{0,2}(?:7[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|[1-689][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){7,14})|[78][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|(?:[1-9][-(). ]{0,2}[0-9]|0[-(). ]{0,2}[1-9])[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){8}))$",
            "description": "A phone number, normalised to E.164: `+7 912 345-67-89`, `8 (912) 345-67-89`, `9123456789`, `0049 30 1234567`. Digits with spaces, `-`, `(`, `)`, `.` between them (the server takes any number in a row; the pattern, two); international with `+` or `00` (8-15 digits, not starting with 0; 11 after a 7), or national (10 digits, or 11 starting with 8 or 7) in the default country (`GATEHOUSE_DEFAULT_COUNTRY_CODE`, 7; the pattern is for 7). At most 32 characters."
          }
        },
        "oneOf": [{"required": ["email"]}, {"required": ["phone"]}],
        "examples": [{"email": "ivan@example.com"}]
      },
      "CodeSent": {
        "type": "object",
        "description": "The answer to every code request: when the code dies, when another may be asked for, and how many wrong tries it takes.",
        "required": ["channel", "destination", "expiresAt", "resendAvailableAt", "attemptsAllowed", "codeLength"],
        "properties": {
          "channel": {"$ref": "#/components/schemas/CodeChannel"},
          "destination": {
            "type": "string",
            "description": "The address or phone as the server normalised it (E.164 for phones)."
          },
          "expiresAt": {"$ref": "#/components/schemas/Timestamp"},
          "resendAvailableAt": {"$ref": "#/components/schemas/Timestamp"},
          "attemptsAllowed": {"type": "integer", "minimum": 0},
          "codeLength": {"type": "integer", "minimum": 1}
        }
      },
      "SignupRequest": {
        "type": "object",
        "description": "The code from `POST /v1/signup/code` and the new account's fields. Exactly one of `email` or `phone` (the one the code was sent to).",
        "required": ["code", "password"],
        "properties": {
          "email": {
            "type": "string",
            "format": "email",
            "maxLength": 254,
            "pattern": "^(?=[^@]{1,64}@)[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+(?:[A-Za-z]{2,63}|[Xx][Nn]--[A-Za-z0-9-]{0,58}[A-Za-z0-9])$",
            "description": "An email address, trimmed and lower-cased by the server: a dot-atom local part (no quoted strings) and a domain name (no address literals) of two labels or more."
          },
          "phone": {
            "type": "string",
            "maxLength": 32,
            "pattern": "^(?:\\+[-(). ]{0,2}(?:7[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|[1-689][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){7,14})|[-(). ]{0,2}(?:0[-(). ]{0,2}0[-(). ]{0,2}(?:7[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|[1-689][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){7,14})|[78][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|(?:[1-9][-(). ]{0,2}[0-9]|0[-(). ]{0,2}[1-9])[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){8}))$",
            "description": "A phone number, normalised to E.164: `+7 912 345-67-89`, `8 (912) 345-67-89`, `9123456789`, `0049 30 1234567`. Digits with spaces, `-`, `(`, `)`, `.` between them (the server takes any number in a row; the pattern, two); international with `+` or `00` (8-15 digits, not starting with 0; 11 after a 7), or national (10 digits, or 11 starting with 8 or 7) in the default country (`GATEHOUSE_DEFAULT_COUNTRY_CODE`, 7; the pattern is for 7). At most 32 characters."
          },
          "code": {
            "type": "string",
            "pattern": "^[ \\t]*[0-9]{4,10}[ \\t]*$",
            "description": "The code from `POST /v1/signup/code`."
          },
          "password": {
            "type": "string",
            "minLength": 6,
            "maxLength": 72,
            "allOf": [
              {"pattern": "[0-9]"},
              {"pattern": "[!-/:-@\\[-`{-~]"},
              {"anyOf": [{"pattern": "^[ -~]*$"}, {"maxLength": 18}]}
            ],
            "description": "The new account's password. A new password, by the default policy: at least 6 characters, at most 72 UTF-8 bytes, with a digit and a special character (not a letter, digit or blank). The schema can only count characters: it takes 72 printable ASCII characters, or 18 of any kind (72 bytes at most either way), and names ASCII digits and punctuation."
          },
          "firstName": {"type": "string", "maxLength": 256},
          "lastName": {"type": "string", "maxLength": 256},
          "tag": {
            "type": "string",
            "pattern": "^@?(?=[0-9_.]*[A-Za-z])[A-Za-z0-9_.]{3,32}$",
            "description": "The public `@handle`: 3-32 of `a-z`, `0-9`, `_`, `.`, at least one letter; a leading `@` is dropped and capitals are lower-cased. Unique."
          },
          "birthday": {"type": "string", "format": "date", "description": "A calendar date, `yyyy-MM-dd`."},
          "locale": {
            "type": "string",
            "pattern": "^([Ee][Nn]|[Rr][Uu])([-_][A-Za-z0-9]{1,8}){0,2}$",
            "description": "`en` or `ru`, optionally with a region (`ru-RU`, `en_GB`): the language of the account's mail and SMS. The request's language when absent."
          },
          "device": {
            "type": "string",
            "maxLength": 256,
            "description": "A label for the session it opens (e.g. \"iPhone 15, iOS 18\"); the `User-Agent` when absent."
          }
        },
        "oneOf": [{"required": ["email"]}, {"required": ["phone"]}]
      },
      "LoginRequest": {
        "type": "object",
        "required": ["identifier", "password"],
        "properties": {
          "identifier": {
            "type": "string",
            "minLength": 1,
            "maxLength": 256,
            "description": "An email, a tag or a phone."
          },
          "password": {"type": "string", "minLength": 1, "maxLength": 256, "description": "The password."},
          "device": {
            "type": "string",
            "maxLength": 256,
            "description": "A label for the session it opens (e.g. \"iPhone 15, iOS 18\"); the `User-Agent` when absent."
          }
        }
      },
      "Account": {
        "type": "object",
        "description": "The account as `/v1` shows it to its owner. Absent optional members are left out, not `null`.",
        "required": ["id", "emailConfirmed", "phoneVerified", "createdAt", "updatedAt"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "email": {"type": "string", "description": "The address in use (for display, login and recovery)."},
          "emailConfirmed": {"type": "boolean"},
          "pendingEmail": {
            "type": "string",
            "description": "A new address waiting for its code; `email` stays in use until then."
          },
          "phone": {"type": "string", "description": "E.164."},
          "phoneVerified": {"type": "boolean"},
          "tag": {"type": "string"},
          "firstName": {"type": "string"},
          "lastName": {"type": "string"},
          "middleName": {"type": "string"},
          "birthday": {"type": "string", "format": "date", "description": "A calendar date, `yyyy-MM-dd`."},
          "locale": {"type": "string", "description": "`en` or `ru`."},
          "avatarUrl": {
            "type": "string",
            "format": "uri",
            "description": "Absolute URL of the avatar image (`GET /v1/avatars/{id}`), if any."
          },
          "createdAt": {"$ref": "#/components/schemas/Timestamp"},
          "updatedAt": {"$ref": "#/components/schemas/Timestamp"}
        }
      },
      "AuthSession": {
        "type": "object",
        "description": "A new session: the only time its token is shown.",
        "required": ["token", "tokenType", "sessionId", "expiresAt", "account"],
        "properties": {
          "token": {"type": "string", "description": "The bearer token."},
          "tokenType": {"type": "string", "const": "Bearer"},
          "sessionId": {"type": "string", "format": "uuid"},
          "expiresAt": {"$ref": "#/components/schemas/Timestamp"},
          "account": {"$ref": "#/components/schemas/Account"}
        }
      },
      "TagAvailability": {
        "type": "object",
        "required": ["tag", "available"],
        "properties": {
          "tag": {"type": "string", "description": "The tag as it would be stored (lower-case, without `@`)."},
          "available": {"type": "boolean"}
        }
      },
      "SessionInfo": {
        "type": "object",
        "required": ["id", "createdAt", "lastUsedAt", "expiresAt", "current"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "device": {"type": "string"},
          "ip": {"type": "string"},
          "createdAt": {"$ref": "#/components/schemas/Timestamp"},
          "lastUsedAt": {"$ref": "#/components/schemas/Timestamp"},
          "expiresAt": {"$ref": "#/components/schemas/Timestamp"},
          "current": {"type": "boolean", "description": "The session making this request."}
        }
      },
      "SessionList": {
        "type": "object",
        "required": ["sessions"],
        "properties": {
          "sessions": {
            "type": "array",
            "items": {"$ref": "#/components/schemas/SessionInfo"},
            "description": "Newest first."
          }
        }
      },
      "SessionsRevoked": {
        "type": "object",
        "required": ["revoked"],
        "properties": {"revoked": {"type": "integer", "minimum": 0, "description": "How many sessions were ended."}}
      },
      "RecoveryRequest": {
        "type": "object",
        "description": "The code from `POST /v1/recovery/code` and the new password. Exactly one of `email` or `phone`.",
        "required": ["code", "password"],
        "properties": {
          "email": {
            "type": "string",
            "format": "email",
            "maxLength": 254,
            "pattern": "^(?=[^@]{1,64}@)[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+(?:[A-Za-z]{2,63}|[Xx][Nn]--[A-Za-z0-9-]{0,58}[A-Za-z0-9])$",
            "description": "An email address, trimmed and lower-cased by the server: a dot-atom local part (no quoted strings) and a domain name (no address literals) of two labels or more."
          },
          "phone": {
            "type": "string",
            "maxLength": 32,
            "pattern": "^(?:\\+[-(). ]{0,2}(?:7[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|[1-689][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){7,14})|[-(). ]{0,2}(?:0[-(). ]{0,2}0[-(). ]{0,2}(?:7[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|[1-689][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){7,14})|[78][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|(?:[1-9][-(). ]{0,2}[0-9]|0[-(). ]{0,2}[1-9])[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){8}))$",
            "description": "A phone number, normalised to E.164: `+7 912 345-67-89`, `8 (912) 345-67-89`, `9123456789`, `0049 30 1234567`. Digits with spaces, `-`, `(`, `)`, `.` between them (the server takes any number in a row; the pattern, two); international with `+` or `00` (8-15 digits, not starting with 0; 11 after a 7), or national (10 digits, or 11 starting with 8 or 7) in the default country (`GATEHOUSE_DEFAULT_COUNTRY_CODE`, 7; the pattern is for 7). At most 32 characters."
          },
          "code": {
            "type": "string",
            "pattern": "^[ \\t]*[0-9]{4,10}[ \\t]*$",
            "description": "The code from `POST /v1/recovery/code`."
          },
          "password": {
            "type": "string",
            "minLength": 6,
            "maxLength": 72,
            "allOf": [
              {"pattern": "[0-9]"},
              {"pattern": "[!-/:-@\\[-`{-~]"},
              {"anyOf": [{"pattern": "^[ -~]*$"}, {"maxLength": 18}]}
            ],
            "description": "A new password, by the default policy: at least 6 characters, at most 72 UTF-8 bytes, with a digit and a special character (not a letter, digit or blank). The schema can only count characters: it takes 72 printable ASCII characters, or 18 of any kind (72 bytes at most either way), and names ASCII digits and punctuation."
          }
        },
        "oneOf": [{"required": ["email"]}, {"required": ["phone"]}]
      },
      "ProfileUpdate": {
        "type": "object",
        "description": "A JSON merge patch of the profile: a member left out is unchanged, `null` clears it. `tag` cannot be cleared once set.",
        "properties": {
          "firstName": {"type": ["string", "null"], "maxLength": 256},
          "lastName": {"type": ["string", "null"], "maxLength": 256},
          "middleName": {"type": ["string", "null"], "maxLength": 256},
          "tag": {
            "type": "string",
            "pattern": "^@?(?=[0-9_.]*[A-Za-z])[A-Za-z0-9_.]{3,32}$",
            "description": "The public `@handle`: 3-32 of `a-z`, `0-9`, `_`, `.`, at least one letter; a leading `@` is dropped and capitals are lower-cased. Unique. Replaces the tag; it cannot be removed (`null` is 400 `invalid_parameter`)."
          },
          "birthday": {"type": ["string", "null"], "format": "date", "description": "A calendar date, `yyyy-MM-dd`."},
          "locale": {
            "type": ["string", "null"],
            "pattern": "^([Ee][Nn]|[Rr][Uu])([-_][A-Za-z0-9]{1,8}){0,2}$",
            "description": "`en` or `ru`, optionally with a region (`ru-RU`, `en_GB`): the language of the account's mail and SMS."
          }
        }
      },
      "PasswordChange": {
        "type": "object",
        "required": ["currentPassword", "newPassword"],
        "properties": {
          "currentPassword": {
            "type": "string",
            "minLength": 1,
            "maxLength": 256,
            "description": "The password in use."
          },
          "newPassword": {
            "type": "string",
            "minLength": 6,
            "maxLength": 72,
            "allOf": [
              {"pattern": "[0-9]"},
              {"pattern": "[!-/:-@\\[-`{-~]"},
              {"anyOf": [{"pattern": "^[ -~]*$"}, {"maxLength": 18}]}
            ],
            "description": "A new password, by the default policy: at least 6 characters, at most 72 UTF-8 bytes, with a digit and a special character (not a letter, digit or blank). The schema can only count characters: it takes 72 printable ASCII characters, or 18 of any kind (72 bytes at most either way), and names ASCII digits and punctuation."
          }
        }
      },
      "EmailChangeRequest": {
        "type": "object",
        "required": ["email", "currentPassword"],
        "properties": {
          "currentPassword": {
            "type": "string",
            "minLength": 1,
            "maxLength": 256,
            "description": "The password in use: a new address or phone is a new way into the account, so a session alone cannot add one (400 `current_password_required` without it, 400 `invalid_credentials` when wrong; wrong ones count against the login failure budget)."
          },
          "email": {
            "type": "string",
            "format": "email",
            "maxLength": 254,
            "pattern": "^(?=[^@]{1,64}@)[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+(?:[A-Za-z]{2,63}|[Xx][Nn]--[A-Za-z0-9-]{0,58}[A-Za-z0-9])$",
            "description": "The new address (trimmed and lower-cased)."
          }
        }
      },
      "PhoneVerificationRequest": {
        "type": "object",
        "required": ["phone", "currentPassword"],
        "properties": {
          "currentPassword": {
            "type": "string",
            "minLength": 1,
            "maxLength": 256,
            "description": "The password in use: a new address or phone is a new way into the account, so a session alone cannot add one (400 `current_password_required` without it, 400 `invalid_credentials` when wrong; wrong ones count against the login failure budget)."
          },
          "phone": {
            "type": "string",
            "maxLength": 32,
            "pattern": "^(?:\\+[-(). ]{0,2}(?:7[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|[1-689][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){7,14})|[-(). ]{0,2}(?:0[-(). ]{0,2}0[-(). ]{0,2}(?:7[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|[1-689][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){7,14})|[78][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|(?:[1-9][-(). ]{0,2}[0-9]|0[-(). ]{0,2}[1-9])[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){8}))$",
            "description": "A phone number, normalised to E.164: `+7 912 345-67-89`, `8 (912) 345-67-89`, `9123456789`, `0049 30 1234567`. Digits with spaces, `-`, `(`, `)`, `.` between them (the server takes any number in a row; the pattern, two); international with `+` or `00` (8-15 digits, not starting with 0; 11 after a 7), or national (10 digits, or 11 starting with 8 or 7) in the default country (`GATEHOUSE_DEFAULT_COUNTRY_CODE`, 7; the pattern is for 7). At most 32 characters."
          }
        }
      },
      "EmailCodeVerification": {
        "type": "object",
        "required": ["code"],
        "properties": {
          "code": {
            "type": "string",
            "pattern": "^[ \\t]*[0-9]{4,10}[ \\t]*$",
            "description": "The code mailed to the pending address."
          }
        }
      },
      "PhoneCodeVerification": {
        "type": "object",
        "required": ["phone", "code"],
        "properties": {
          "phone": {
            "type": "string",
            "maxLength": 32,
            "pattern": "^(?:\\+[-(). ]{0,2}(?:7[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|[1-689][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){7,14})|[-(). ]{0,2}(?:0[-(). ]{0,2}0[-(). ]{0,2}(?:7[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|[1-689][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){7,14})|[78][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|(?:[1-9][-(). ]{0,2}[0-9]|0[-(). ]{0,2}[1-9])[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){8}))$",
            "description": "The phone the code was sent to. A phone number, normalised to E.164: `+7 912 345-67-89`, `8 (912) 345-67-89`, `9123456789`, `0049 30 1234567`. Digits with spaces, `-`, `(`, `)`, `.` between them (the server takes any number in a row; the pattern, two); international with `+` or `00` (8-15 digits, not starting with 0; 11 after a 7), or national (10 digits, or 11 starting with 8 or 7) in the default country (`GATEHOUSE_DEFAULT_COUNTRY_CODE`, 7; the pattern is for 7). At most 32 characters."
          },
          "code": {"type": "string", "pattern": "^[ \\t]*[0-9]{4,10}[ \\t]*$", "description": "The code from the SMS."}
        }
      },
      "PhoneSendSMSForm": {
        "type": "object",
        "description": "Parameter names match case-insensitively; they may also come in the query string (a body value wins).",
        "required": ["phone"],
        "properties": {
          "phone": {
            "type": "string",
            "maxLength": 32,
            "pattern": "^(?:\\+[-(). ]{0,2}(?:7[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|[1-689][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){7,14})|[-(). ]{0,2}(?:0[-(). ]{0,2}0[-(). ]{0,2}(?:7[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|[1-689][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){7,14})|[78][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|(?:[1-9][-(). ]{0,2}[0-9]|0[-(). ]{0,2}[1-9])[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){8}))$",
            "description": "A phone without an account yet. A phone number, normalised to E.164: `+7 912 345-67-89`, `8 (912) 345-67-89`, `9123456789`, `0049 30 1234567`. Digits with spaces, `-`, `(`, `)`, `.` between them (the server takes any number in a row; the pattern, two); international with `+` or `00` (8-15 digits, not starting with 0; 11 after a 7), or national (10 digits, or 11 starting with 8 or 7) in the default country (`GATEHOUSE_DEFAULT_COUNTRY_CODE`, 7; the pattern is for 7). At most 32 characters."
          }
        }
      },
      "PhoneRegisterForm": {
        "type": "object",
        "description": "Parameter names match case-insensitively; they may also come in the query string (a body value wins).",
        "required": ["phone", "code"],
        "properties": {
          "phone": {
            "type": "string",
            "maxLength": 32,
            "pattern": "^(?:\\+[-(). ]{0,2}(?:7[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|[1-689][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){7,14})|[-(). ]{0,2}(?:0[-(). ]{0,2}0[-(). ]{0,2}(?:7[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|[1-689][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){7,14})|[78][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|(?:[1-9][-(). ]{0,2}[0-9]|0[-(). ]{0,2}[1-9])[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){8}))$",
            "description": "The phone the code was sent to. A phone number, normalised to E.164: `+7 912 345-67-89`, `8 (912) 345-67-89`, `9123456789`, `0049 30 1234567`. Digits with spaces, `-`, `(`, `)`, `.` between them (the server takes any number in a row; the pattern, two); international with `+` or `00` (8-15 digits, not starting with 0; 11 after a 7), or national (10 digits, or 11 starting with 8 or 7) in the default country (`GATEHOUSE_DEFAULT_COUNTRY_CODE`, 7; the pattern is for 7). At most 32 characters."
          },
          "code": {"type": "string", "pattern": "^[ \\t]*[0-9]{4,10}[ \\t]*$", "description": "The code from the SMS."},
          "login": {
            "type": "string",
            "pattern": "^(?=[0-9._-]*[A-Za-z])[A-Za-z0-9._-]{6,64}$",
            "description": "6-64 letters, digits, `._-`, at least one letter; unique (case-insensitive). The phone when absent. (The server takes any Unicode letter; the pattern names ASCII.)"
          },
          "password": {
            "type": "string",
            "minLength": 6,
            "maxLength": 72,
            "allOf": [
              {"pattern": "[0-9]"},
              {"pattern": "[!-/:-@\\[-`{-~]"},
              {"anyOf": [{"pattern": "^[ -~]*$"}, {"maxLength": 18}]}
            ],
            "description": "If absent, one is generated and returned once. A new password, by the default policy: at least 6 characters, at most 72 UTF-8 bytes, with a digit and a special character (not a letter, digit or blank). The schema can only count characters: it takes 72 printable ASCII characters, or 18 of any kind (72 bytes at most either way), and names ASCII digits and punctuation."
          },
          "name": {"type": "string", "maxLength": 256, "description": "First name (also accepted as `firstName`)."},
          "firstName": {"type": "string", "maxLength": 256, "description": "First name (same as `name`)."},
          "lastname": {"type": "string", "maxLength": 256, "description": "Last name."},
          "surname": {"type": "string", "maxLength": 256, "description": "Patronymic."},
          "email": {
            "type": "string",
            "format": "email",
            "maxLength": 254,
            "pattern": "^(?=[^@]{1,64}@)[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+(?:[A-Za-z]{2,63}|[Xx][Nn]--[A-Za-z0-9-]{0,58}[A-Za-z0-9])$",
            "description": "Unique; unconfirmed until the link is followed."
          },
          "birthday": {
            "type": "string",
            "maxLength": 40,
            "anyOf": [
              {"format": "date"},
              {"format": "date-time"},
              {
                "pattern": "^(?:(?:0[1-9]|1[0-9]|2[0-8])\\.(?:0[1-9]|1[0-2])|(?:29|30)\\.(?:0[13-9]|1[0-2])|31\\.(?:0[13578]|1[02]))\\.(?!0000)[0-9]{4}(?:[ T](?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9])?)?$"
              },
              {
                "pattern": "^(?!0000)[0-9]{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)[ T](?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9])?$"
              }
            ],
            "description": "A date: `22.01.2015 15:23:56`, `22.01.2015`, `2015-01-22T15:23:56`, `2015-01-22`, or ISO 8601 with a zone; no zone means UTC."
          }
        }
      },
      "PhoneLoginForm": {
        "type": "object",
        "description": "Parameter names match case-insensitively; they may also come in the query string (a body value wins).",
        "required": ["login", "password"],
        "properties": {
          "login": {
            "type": "string",
            "minLength": 1,
            "maxLength": 256,
            "pattern": "\\S",
            "description": "The login, the phone (any format), or the account's email."
          },
          "password": {
            "type": "string",
            "minLength": 1,
            "maxLength": 256,
            "pattern": "\\S",
            "description": "The password, or an unused temporary password from `/api/users/restore`."
          }
        }
      },
      "PhoneChangeForm": {
        "type": "object",
        "description": "Only the parameters sent are changed; an empty value clears a field (not `email`). Names match case-insensitively.",
        "properties": {
          "name": {"type": "string", "maxLength": 256, "description": "First name (also accepted as `firstName`)."},
          "firstName": {"type": "string", "maxLength": 256, "description": "First name (same as `name`)."},
          "lastname": {"type": "string", "maxLength": 256, "description": "Last name."},
          "surname": {"type": "string", "maxLength": 256, "description": "Patronymic (also accepted as `surName`)."},
          "birthday": {
            "type": "string",
            "maxLength": 40,
            "anyOf": [
              {"format": "date"},
              {"format": "date-time"},
              {
                "pattern": "^(?:(?:0[1-9]|1[0-9]|2[0-8])\\.(?:0[1-9]|1[0-2])|(?:29|30)\\.(?:0[13-9]|1[0-2])|31\\.(?:0[13578]|1[02]))\\.(?!0000)[0-9]{4}(?:[ T](?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9])?)?$"
              },
              {
                "pattern": "^(?!0000)[0-9]{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)[ T](?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9])?$"
              }
            ],
            "description": "A date: `22.01.2015 15:23:56`, `22.01.2015`, `2015-01-22T15:23:56`, `2015-01-22`, or ISO 8601 with a zone; no zone means UTC. Empty clears it."
          },
          "fcm": {"type": "string", "maxLength": 256, "description": "Firebase Cloud Messaging token."},
          "email": {
            "type": "string",
            "format": "email",
            "maxLength": 254,
            "pattern": "^(?=[^@]{1,64}@)[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+(?:[A-Za-z]{2,63}|[Xx][Nn]--[A-Za-z0-9-]{0,58}[A-Za-z0-9])$",
            "description": "A new address; `isConfirmed` becomes false until it is confirmed. Cannot be cleared."
          },
          "phone": {
            "type": "string",
            "maxLength": 32,
            "pattern": "^(?:\\+[-(). ]{0,2}(?:7[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|[1-689][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){7,14})|[-(). ]{0,2}(?:0[-(). ]{0,2}0[-(). ]{0,2}(?:7[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|[1-689][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){7,14})|[78][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|(?:[1-9][-(). ]{0,2}[0-9]|0[-(). ]{0,2}[1-9])[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){8}))$",
            "description": "Accepted only if it is the current phone."
          }
        }
      },
      "PhoneRestoreForm": {
        "type": "object",
        "description": "One of `login`, `mail` (or `email`), `phone` is required; the first non-empty of these is used. Names match case-insensitively.",
        "properties": {
          "login": {"type": "string", "maxLength": 256},
          "mail": {
            "type": "string",
            "maxLength": 256,
            "description": "The account's confirmed email (also accepted as `email`)."
          },
          "email": {"type": "string", "maxLength": 256, "description": "Same as `mail`."},
          "phone": {"type": "string", "maxLength": 256},
          "sms": {
            "type": "string",
            "enum": ["true", "false", "1", "0", "yes", "no", "on", "off"],
            "description": "`true`/`1`/`yes`/`on` (any case): by SMS to the phone; `false`/`0`/`no`/`off` or absent: by mail to the confirmed address."
          }
        },
        "anyOf": [
          {"required": ["login"], "properties": {"login": {"pattern": "\\S"}}},
          {"required": ["mail"], "properties": {"mail": {"pattern": "\\S"}}},
          {"required": ["email"], "properties": {"email": {"pattern": "\\S"}}},
          {"required": ["phone"], "properties": {"phone": {"pattern": "\\S"}}}
        ]
      },
      "PhoneRegisterResponse": {
        "type": "object",
        "required": ["login"],
        "properties": {
          "login": {"type": "string", "description": "The login, or the phone if none was given."},
          "password": {"type": "string", "description": "Present only when the server generated the password."}
        }
      },
      "PhoneLoginResponse": {
        "type": "object",
        "required": ["token"],
        "properties": {
          "token": {"type": "string", "description": "An opaque session token, valid 24 h."},
          "expires": {
            "type": "string",
            "format": "date-time",
            "description": "ISO 8601, UTC (`2026-11-23T03:19:37Z`)."
          }
        }
      },
      "PhonePartnerZone": {
        "type": "object",
        "required": ["domainId", "name", "forfeit", "isBanned", "discount"],
        "properties": {
          "domainId": {"type": "string"},
          "name": {"type": "string"},
          "forfeit": {"type": "number"},
          "isBanned": {"type": "boolean"},
          "discount": {"type": "integer"}
        }
      },
      "PhoneUser": {
        "type": "object",
        "description": "The current user, every key always present (`null` when empty).",
        "required": [
          "id",
          "login",
          "name",
          "firstName",
          "lastName",
          "surName",
          "phone",
          "email",
          "birthday",
          "room",
          "base",
          "isConfirmed",
          "fcm",
          "parts"
        ],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "login": {"type": "string", "description": "The login (the phone when none)."},
          "name": {"type": "string", "description": "The login, as the spec documents it."},
          "firstName": {"type": ["string", "null"]},
          "lastName": {"type": ["string", "null"]},
          "surName": {"type": ["string", "null"], "description": "Patronymic."},
          "phone": {"type": ["string", "null"], "description": "E.164."},
          "email": {
            "type": ["string", "null"],
            "description": "The address in use, or a pending new one while a change awaits confirmation."
          },
          "birthday": {"type": ["string", "null"], "description": "`dd.MM.yyyy HH:mm:ss`, UTC."},
          "room": {"type": ["string", "null"], "description": "Always `null` in Gatehouse."},
          "base": {"type": ["string", "null"], "description": "Always `null` in Gatehouse."},
          "isConfirmed": {"type": "boolean", "description": "True only when the address `email` shows is confirmed."},
          "fcm": {"type": ["string", "null"], "description": "Firebase Cloud Messaging token."},
          "parts": {
            "type": "array",
            "items": {"$ref": "#/components/schemas/PhonePartnerZone"},
            "description": "Always empty in Gatehouse."
          }
        }
      }
    },
    "responses": {
      "Unauthorized": {
        "description": "`unauthorized`: a missing, unknown, revoked or expired bearer token.",
        "headers": {"WWW-Authenticate": {"$ref": "#/components/headers/WWWAuthenticate"}},
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
      },
      "PayloadTooLarge": {
        "description": "`body_too_large`: the body is over the configured limit.",
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
      },
      "UnsupportedMediaType": {
        "description": "`unsupported_media_type`: a `Content-Type` the route does not read.",
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
      },
      "TooManyRequests": {
        "description": "`rate_limited` or `resend_too_soon`: a limit was reached; `retryAfter` and `Retry-After` say for how long.",
        "headers": {"Retry-After": {"$ref": "#/components/headers/RetryAfter"}},
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
      },
      "UnexpectedProblem": {
        "description": "Any other error, as a problem document (5xx: `internal_error`; also `not_found`, `method_not_allowed`).",
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
      },
      "PhoneUnauthorized": {
        "description": "`unauthorized`: a missing, unknown, expired or logged-out token. Plain-text message.",
        "headers": {
          "X-Error-Code": {"$ref": "#/components/headers/XErrorCode"},
          "WWW-Authenticate": {"$ref": "#/components/headers/WWWAuthenticate"}
        },
        "content": {"text/plain": {"schema": {"type": "string"}}}
      },
      "PhoneTooManyRequests": {
        "description": "`rate_limited` or `resend_too_soon`: a limit was reached. Plain-text message.",
        "headers": {
          "X-Error-Code": {"$ref": "#/components/headers/XErrorCode"},
          "Retry-After": {"$ref": "#/components/headers/RetryAfter"}
        },
        "content": {"text/plain": {"schema": {"type": "string"}}}
      },
      "PhoneServerError": {
        "description": "`internal_error`: the server failed. Plain-text message.",
        "headers": {"X-Error-Code": {"$ref": "#/components/headers/XErrorCode"}},
        "content": {"text/plain": {"schema": {"type": "string"}}}
      }
    },
    "parameters": {
      "AcceptLanguage": {
        "name": "Accept-Language",
        "in": "header",
        "required": false,
        "description": "The language of messages: `en` or `ru`.",
        "schema": {"type": "string"}
      }
    },
    "headers": {
      "RetryAfter": {
        "description": "Seconds to wait before trying again.",
        "required": true,
        "schema": {"type": "integer", "minimum": 0}
      },
      "WWWAuthenticate": {
        "description": "`Bearer`, or `Bearer error=\"invalid_token\"` when a token was sent.",
        "required": true,
        "schema": {"type": "string"}
      },
      "XErrorCode": {
        "description": "The machine-readable error code (see the `ErrorCode` schema).",
        "required": true,
        "schema": {"$ref": "#/components/schemas/ErrorCode"}
      }
    },
    "securitySchemes": {
      "bearerAuth": {
        "type": "http",
        "scheme": "bearer",
        "description": "`Authorization: Bearer <token>`: on `/v1` from `POST /v1/signup` or `POST /v1/sessions`; on `/api` from `POST /api/auth/login`."
      }
    }
  }
}
"""#
}
