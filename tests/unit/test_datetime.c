/* test_datetime.c - dr_datetime_parse: Unix seconds, local dates and times
 * (pinned to fixed time zones), and the inputs it must refuse with words. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drover/datetime.h"

static void set_tz(const char *tz)
{
    setenv("TZ", tz, 1);
    tzset();
}

static void expect_t(const char *s, double want)
{
    dr_err_t err = {0};
    double got = -1;
    int rc = dr_datetime_parse(s, &got, &err);
    if (rc != DR_OK)
        fail_msg("'%s': %s", s, err.msg);
    if (got != want)
        fail_msg("'%s': got %.3f, want %.3f", s, got, want);
}

static void expect_bad(const char *s, const char *msg)
{
    dr_err_t err = {0};
    double got = 12345;
    assert_int_equal(dr_datetime_parse(s, &got, &err), DR_EINVAL);
    tu_assert_contains(err.msg, msg);
    assert_true(got == 12345); /* untouched on error */
}

static void test_unix_seconds(void **state)
{
    (void)state;
    set_tz("UTC0");
    expect_t("0", 0);
    expect_t("1718000000", 1718000000);
    expect_t("1718000000.5", 1718000000.5);
}

static void test_utc_dates(void **state)
{
    (void)state;
    set_tz("UTC0");
    expect_t("1970-01-01", 0);
    expect_t("2024-06-10", 1717977600);
    expect_t("2024-06-10T12:30", 1717977600 + 12 * 3600 + 30 * 60);
    expect_t("2024-06-10 12:30:15", 1717977600 + 12 * 3600 + 30 * 60 + 15);
    expect_t("2024-02-29", 1709164800); /* a leap day */
    expect_t("2000-02-29T23:59:59", 951868799);
}

static void test_local_zone(void **state)
{
    (void)state;
    /* five hours behind UTC, no daylight saving time */
    set_tz("EST5");
    expect_t("2024-06-10", 1717977600 + 5 * 3600);
    /* New York: daylight saving time in June (UTC-4), not in January (UTC-5) */
    set_tz("EST5EDT,M3.2.0,M11.1.0");
    expect_t("2024-06-10T00:00", 1717977600 + 4 * 3600);
    expect_t("2024-01-10T00:00", 1704844800 + 5 * 3600);
    set_tz("UTC0");
}

static void test_refused(void **state)
{
    (void)state;
    set_tz("UTC0");
    expect_bad("", "empty");
    expect_bad("yesterday", "'yesterday' is not Unix seconds or YYYY-MM-DD[THH:MM[:SS]]");
    expect_bad("-5", "is not Unix seconds");
    expect_bad("1e9", "is not Unix seconds");
    expect_bad("nan", "is not Unix seconds");
    expect_bad("12.3.4", "is not Unix seconds");
    expect_bad("2024-6-10", "is not Unix seconds");
    expect_bad("2024-06-10T", "is not Unix seconds");
    expect_bad("2024-06-10T12", "is not Unix seconds");
    expect_bad("2024-06-10T12:3", "is not Unix seconds");
    expect_bad("2024-06-10T12:30:", "is not Unix seconds");
    expect_bad("2024-06-10T12:30:15Z", "is not Unix seconds");
    expect_bad("2024-06-10x12:30", "is not Unix seconds");
    expect_bad("2024-13-01", "month 13 is out of range");
    expect_bad("2024-00-01", "month 00 is out of range");
    expect_bad("2023-02-29", "2023-02 has no day 29");
    expect_bad("2024-04-31", "2024-04 has no day 31");
    expect_bad("2024-06-10T24:00", "24:00:00 is not a time of day");
    expect_bad("2024-06-10T12:60", "is not a time of day");
    expect_bad("1969-12-31", "year 1969 is out of range");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unix_seconds),
        cmocka_unit_test(test_utc_dates),
        cmocka_unit_test(test_local_zone),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
