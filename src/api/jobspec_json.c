/* jobspec_json.c - a job spec as the API's JSON object (docs/jobspec.md).
 *
 * Keys are the fields' canonical names plus argv, env, script, script_name
 * and ignored.  A string value is parsed exactly as the CLI parses it
 * (dr_jobspec_set); a number is the value in the field's unit (seconds for
 * times, MB for mem).  The output holds every given field, times in whole
 * seconds, so from_json(to_json(s)) gives s back. */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/jobspec_priv.h"
#include "drover/util.h"

#define KQ(k) (int)(strlen(k) > 64 ? 64 : strlen(k)), (k)

static int str_of(json_t *v, const char *key, const char **out, size_t max, dr_err_t *err)
{
    *out = "";
    if (!json_is_string(v)) {
        dr_err_set(err, DR_EINVAL, "%.*s: must be a string", KQ(key));
        return DR_EINVAL;
    }
    size_t n = json_string_length(v);
    const char *s = json_string_value(v);
    if (strlen(s) != n) {
        dr_err_set(err, DR_EINVAL, "%.*s: must not contain NUL", KQ(key));
        return DR_EINVAL;
    }
    if (n > max) {
        dr_err_set(err, DR_ELIMIT, "%.*s: longer than %zu bytes", KQ(key), max);
        return DR_ELIMIT;
    }
    *out = s;
    return DR_OK;
}

static int str_array(json_t *v, const char *key, uint32_t max, bool env, char ***out, uint32_t *n,
                     dr_err_t *err)
{
    if (!json_is_array(v))
        return dr_err_set(err, DR_EINVAL, "%s: must be an array of strings", key);
    size_t len = json_array_size(v);
    if (len > max)
        return dr_err_set(err, DR_ELIMIT, "%s: more than %u entries", key, max);
    jf_vec_free(out, n);
    for (size_t i = 0; i < len; i++) {
        json_t *e = json_array_get(v, i);
        const char *s;
        if (!json_is_string(e))
            return dr_err_set(err, DR_EINVAL, "%s: must be an array of strings", key);
        int rc = str_of(e, key, &s, DR_JOBSPEC_MAX_SCRIPT, err);
        if (rc != DR_OK)
            return rc;
        const char *eq = env ? strchr(s, '=') : NULL;
        if (env && (!eq || eq == s))
            return dr_err_set(err, DR_EINVAL, "%s: '%.64s' is not KEY=VALUE", key, s);
        if (jf_vec_push(out, n, s) != 0)
            return dr_err_set(err, DR_ENOMEM, "%s: out of memory", key);
    }
    if (len == 0) { /* an empty list: argv[0] == NULL all the same */
        *out = calloc(1, sizeof **out);
        if (!*out)
            return dr_err_set(err, DR_ENOMEM, "%s: out of memory", key);
    }
    return DR_OK;
}

/* A number for field d, in its unit. */
static int number(dr_jobspec_t *s, const jf_def_t *d, json_t *v, dr_err_t *err)
{
    const char *f = d->pub.name;
    if (d->store == JF_TIME) { /* seconds, rounded up as text is */
        double x = json_number_value(v);
        if (!(x >= 0 && x <= (double)JF_MAX_TIME_S))
            return dr_err_set(err, DR_EINVAL, "%s: must be from 0 to %lld seconds, not %g", f,
                              JF_MAX_TIME_S, x);
        *(dr_time_t *)((char *)s + d->off) = (dr_time_t)ceil(x) * DR_NSEC_PER_SEC;
        s->set |= DR_JF_BIT(d->pub.id);
        return DR_OK;
    }
    if (d->store == JF_FLAG)
        return dr_err_set(err, DR_EINVAL, "%s: must be true or false", f);
    if (d->store != JF_U32 && d->store != JF_U64 && d->store != JF_I32)
        return dr_err_set(err, DR_EINVAL, "%s: must be a string", f);
    if (!json_is_integer(v))
        return dr_err_set(err, DR_EINVAL, "%s: must be a whole number or a string", f);
    /* the same checks and messages as the text */
    char text[32];
    snprintf(text, sizeof text, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    return jf_set(s, d, JF_HOW_PLAIN, text, err);
}

static int field(dr_jobspec_t *s, const char *key, json_t *v, dr_err_t *err)
{
    const char *str;
    int rc;
    if (json_is_null(v))
        return DR_OK; /* as if absent */
    if (!strcmp(key, "argv"))
        return str_array(v, key, DR_JOBSPEC_MAX_ARGS, false, &s->argv, &s->argc, err);
    if (!strcmp(key, "env"))
        return str_array(v, key, DR_JOBSPEC_MAX_ENV, true, &s->env, &s->nenv, err);
    if (!strcmp(key, "ignored"))
        return str_array(v, key, DR_JOBSPEC_MAX_ARGS, false, &s->ignored, &s->nignored, err);
    if (!strcmp(key, "script") || !strcmp(key, "script_name")) {
        bool script = key[6] == '\0';
        if ((rc = str_of(v, key, &str, script ? DR_JOBSPEC_MAX_SCRIPT : JF_MAX_PATH, err)) != 0)
            return rc;
        char **dst = script ? &s->script : &s->script_name;
        char *copy = dr_strdup(str);
        if (!copy)
            return dr_err_set(err, DR_ENOMEM, "%s: out of memory", key);
        free(*dst);
        *dst = copy;
        return DR_OK;
    }
    const jf_def_t *d = NULL;
    for (int i = 0; i < DR_JF_N && !d; i++)
        if (!strcmp(key, jf_def(i)->pub.name))
            d = jf_def(i);
    if (!d)
        return dr_err_set(err, DR_EINVAL, "%.*s: unknown field", KQ(key));
    if (d->store == JF_FLAG) { /* "requeue": true */
        if (!json_is_boolean(v))
            return dr_err_set(err, DR_EINVAL, "%s: must be true or false", d->pub.name);
        return jf_set(s, d, JF_HOW_PLAIN, json_is_true(v) ? "1" : "0", err);
    }
    if (json_is_number(v))
        return number(s, d, v, err);
    bool text_only =
        d->store == JF_STR || d->store == JF_KIND || d->store == JF_SIGNAL || d->store == JF_DEP;
    if (!json_is_string(v))
        return dr_err_set(err, DR_EINVAL, "%s: must be %s", d->pub.name,
                          text_only ? "a string" : "a number or a string");
    if ((rc = str_of(v, key, &str, SIZE_MAX, err)) != 0)
        return rc;
    return jf_set(s, d, JF_HOW_PLAIN, str, err);
}

int dr_jobspec_from_json(dr_jobspec_t *s, const char *json, size_t len, dr_err_t *err)
{
    json_error_t je;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return dr_err_set(err, DR_EINVAL, "json: %s (line %d, column %d)", je.text, je.line,
                          je.column);
    int rc = DR_OK;
    dr_jobspec_t t;
    dr_jobspec_init(&t);
    if (!json_is_object(root)) {
        rc = dr_err_set(err, DR_EINVAL, "json: a job must be an object");
    } else {
        const char *key;
        json_t *v;
        json_object_foreach(root, key, v)
        {
            if ((rc = field(&t, key, v, err)) != DR_OK)
                break;
        }
    }
    json_decref(root);
    if (rc != DR_OK) {
        dr_jobspec_free(&t);
        return rc;
    }
    dr_jobspec_free(s);
    *s = t;
    return DR_OK;
}

/* --- output --- */

static int put(json_t *o, const char *key, json_t *v)
{
    return v && json_object_set_new(o, key, v) == 0 ? 0 : -1;
}

static json_t *array_of(char *const *v, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < n; i++) {
        if (json_array_append_new(a, json_string(v[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

char *dr_jobspec_to_json(const dr_jobspec_t *s)
{
    json_t *o = json_object();
    int bad = o ? 0 : -1;
    for (int id = 0; id < DR_JF_N && !bad; id++) {
        const jf_def_t *d = jf_def(id);
        if (!jf_given(s, id))
            continue;
        const void *p = (const char *)s + d->off;
        json_t *v = NULL;
        switch (d->store) {
        case JF_STR: {
            const char *str = *(char *const *)p;
            v = json_string(str ? str : "any"); /* only gpu_type is given and NULL */
            break;
        }
        case JF_U32: v = json_integer(*(const uint32_t *)p); break;
        case JF_U64: v = json_integer((json_int_t) * (const uint64_t *)p); break;
        case JF_I32: v = json_integer(*(const int32_t *)p); break;
        case JF_KIND: v = json_string(dr_job_kind_name((dr_job_kind_t)s->kind)); break;
        case JF_TIME: {
            dr_time_t t = *(const dr_time_t *)p;
            v = json_integer(t <= 0 ? 0 : (t + DR_NSEC_PER_SEC - 1) / DR_NSEC_PER_SEC);
            break;
        }
        case JF_FLAG: v = json_boolean(*(const int8_t *)p > 0); break;
        case JF_SIGNAL:
        case JF_DEP: { /* the canonical text, which reads back to the same values */
            char *t = d->store == JF_SIGNAL ? jf_signal_text(s) : jf_dep_text(s);
            v = t ? json_string(t) : NULL;
            free(t);
            break;
        }
        }
        bad = put(o, d->pub.name, v);
    }
    if (!bad && s->argv)
        bad = put(o, "argv", array_of(s->argv, s->argc));
    if (!bad && s->nenv)
        bad = put(o, "env", array_of(s->env, s->nenv));
    if (!bad && s->script)
        bad = put(o, "script", json_string(s->script));
    if (!bad && s->script_name)
        bad = put(o, "script_name", json_string(s->script_name));
    if (!bad && s->nignored)
        bad = put(o, "ignored", array_of(s->ignored, s->nignored));
    char *out = bad ? NULL : json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return out;
}
