/* Status strings from the X-macro table in gshmem/status.h. */
#include <gshmem/status.h>

const char *gshmemx_strerror(int status)
{
    switch (status) {
#define GSHMEMI_STATUS_TEXT(name, value, text) \
    case value:                               \
        return text;
        GSHMEMX_STATUS_TABLE(GSHMEMI_STATUS_TEXT)
#undef GSHMEMI_STATUS_TEXT
    default:
        return "unknown status";
    }
}

const char *gshmemx_status_name(int status)
{
    switch (status) {
#define GSHMEMI_STATUS_NAME(name, value, text) \
    case value:                               \
        return #name;
        GSHMEMX_STATUS_TABLE(GSHMEMI_STATUS_NAME)
#undef GSHMEMI_STATUS_NAME
    default:
        return "GSHMEMX_UNKNOWN";
    }
}
