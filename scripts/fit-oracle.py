#!/usr/bin/env python3
"""Figures of FIT files as Garmin's own FIT SDK for Python reads them (garmin-fit-sdk on PyPI).

The independent oracle of the vault's FIT importer (issue 40): for every .fit file under the
directories given, the file's type and maker, its sessions (start, sport, times, distance,
energy, heart rate), laps, records (count, with a position, with a heart rate, first and last
position in degrees; heart rates stored by a strap during a swim, merged into the records by
the SDK's rule), the activity's local offset, monitoring and weight-scale messages, and the
SDK's errors. Printed as one JSON document on stdout.

    python3 -m venv .build/fitvenv && .build/fitvenv/bin/pip install garmin-fit-sdk==21.218.0
    .build/fitvenv/bin/pip install fitparse==1.2.0   # for the files the SDK does not read
    .build/fitvenv/bin/python scripts/fit-oracle.py Tests/Fixtures/fit > Tests/Fixtures/fit/oracle.json
"""
import datetime
import json
import os
import sys

from garmin_fit_sdk import Decoder, Stream

FIT_EPOCH = 631065600  # 1989-12-31T00:00:00Z in Unix seconds
SEMICIRCLE = 180.0 / 2 ** 31


def unix(value):
    if value is None:
        return None
    if hasattr(value, "timestamp"):
        return int(value.timestamp())
    return int(value) + FIT_EPOCH


def degrees(value):
    return None if value is None else round(value * SEMICIRCLE, 7)


def rounded(value, digits=3):
    return None if value is None else round(float(value), digits)


def figures(path):
    decoder = Decoder(Stream.from_file(path))
    messages, errors = decoder.read(convert_types_to_strings=False, convert_datetimes_to_dates=False,
                                     merge_heart_rates=False, expand_components=True, expand_sub_fields=True)
    file_ids = messages.get("file_id_mesgs", [])
    sessions = []
    for s in messages.get("session_mesgs", []):
        sessions.append({
            "start": unix(s.get("start_time")), "end": unix(s.get("timestamp")),
            "sport": s.get("sport"), "subSport": s.get("sub_sport"),
            "elapsed": rounded(s.get("total_elapsed_time")), "timer": rounded(s.get("total_timer_time")),
            "distance": rounded(s.get("total_distance"), 2), "calories": s.get("total_calories"),
            "avgHeartRate": s.get("avg_heart_rate"), "maxHeartRate": s.get("max_heart_rate"),
        })
    records = messages.get("record_mesgs", [])
    # Heart rate a strap stored during a swim (hr messages), merged into the records by the SDK's
    # own rule (merge_heart_rates): how many records then hold a heart rate, and their sum.
    merged = None
    if messages.get("hr_mesgs"):
        merged_messages, _ = Decoder(Stream.from_file(path)).read(convert_types_to_strings=False, convert_datetimes_to_dates=False,
                                                                   merge_heart_rates=True, expand_components=True)
        rates = [r["heart_rate"] for r in merged_messages.get("record_mesgs", []) if r.get("heart_rate") is not None]
        merged = {"hrMessages": len(messages["hr_mesgs"]), "recordsWithHeartRate": len(rates), "heartRateSum": sum(rates)}
    positioned = [r for r in records if r.get("position_lat") is not None and r.get("position_long") is not None]
    activities = messages.get("activity_mesgs", [])
    offsets = [a["local_timestamp"] - a["timestamp"] for a in activities
               if a.get("local_timestamp") is not None and a.get("timestamp") is not None]
    weights = messages.get("weight_scale_mesgs", [])
    # A monitoring file's days as the device summed them: its daily messages (duration 1440 min)
    # give each activity type's steps for the local day that ends at their timestamp.
    infos = messages.get("monitoring_info_mesgs", [])
    local = infos[0]["local_timestamp"] - infos[0]["timestamp"] if infos and infos[0].get("local_timestamp") is not None else 0
    daily, calories = {}, {}
    for m in messages.get("monitoring_mesgs", []):
        if m.get("duration_min") == 1440 and m.get("timestamp") is not None:
            day = datetime.datetime.fromtimestamp(unix(m["timestamp"]) + local - 1, datetime.timezone.utc).date().isoformat()
            if m.get("steps") is not None:
                daily[day] = daily.get(day, 0) + m["steps"]
            if m.get("active_calories"):
                calories[day] = calories.get(day, 0) + m["active_calories"]
    # Monitoring heart rates, intensity minutes (the minutes since the previous report, moderate
    # and vigorous) and resting heart rates, as the SDK reads the fields.
    monitoring = messages.get("monitoring_mesgs", [])
    monitoring_rates = [m["heart_rate"] for m in monitoring if m.get("heart_rate")]
    intensity = [(m.get("moderate_activity_minutes") or 0) + (m.get("vigorous_activity_minutes") or 0) for m in monitoring]
    resting = [m.get("current_day_resting_heart_rate") for m in messages.get("monitoring_hr_data_mesgs", [])]
    # Sleep levels: each holds from its message to the next one's time, the last to the sleep's
    # stop event (event 74, type stop) when that is later; minutes per level.
    levels = sorted((unix(m["timestamp"]), m.get("sleep_level")) for m in messages.get("sleep_level_mesgs", []) if m.get("timestamp") is not None)
    stops = [unix(e["timestamp"]) for e in messages.get("event_mesgs", []) if e.get("event") == 74 and e.get("event_type") == 1]
    sleep_minutes = {}
    for i, (time, level) in enumerate(levels):
        end = levels[i + 1][0] if i + 1 < len(levels) else max([time] + stops[-1:])
        sleep_minutes[str(level)] = sleep_minutes.get(str(level), 0) + (end - time) / 60
    return {
        "errors": [str(e) for e in errors],
        "sleepLevels": len(levels),
        "sleepMinutes": sleep_minutes,
        "monitoringHeartRates": len(monitoring_rates),
        "monitoringHeartRateSum": sum(monitoring_rates),
        "monitoringIntensityMinutes": sum(intensity),
        "monitoringRestingHeartRates": [r for r in resting if r is not None],
        "type": file_ids[0].get("type") if file_ids else None,
        "manufacturer": file_ids[0].get("manufacturer") if file_ids else None,
        "product": file_ids[0].get("product") if file_ids else None,
        "sessions": sessions,
        "laps": len(messages.get("lap_mesgs", [])),
        "records": len(records),
        "recordsWithPosition": len(positioned),
        "recordsWithHeartRate": len([r for r in records if r.get("heart_rate") is not None]),
        "heartRateSum": sum(r["heart_rate"] for r in records if r.get("heart_rate") is not None),
        "storedHeartRate": merged,
        "firstPosition": [degrees(positioned[0]["position_lat"]), degrees(positioned[0]["position_long"])] if positioned else None,
        "lastPosition": [degrees(positioned[-1]["position_lat"]), degrees(positioned[-1]["position_long"])] if positioned else None,
        "firstRecord": unix(records[0].get("timestamp")) if records else None,
        "lastRecord": unix(records[-1].get("timestamp")) if records else None,
        "localOffset": offsets[0] if offsets else None,
        "monitoring": len(messages.get("monitoring_mesgs", [])),
        "weights": [rounded(w.get("weight"), 2) for w in weights],
        "monitoringDailySteps": daily,
        "monitoringDailyActiveCalories": calories,
        "monitoringLocalOffset": local if infos else None,
    }


def fitparse_records(path):
    """Records as python-fitparse reads them, for files the SDK does not read (compressed
    timestamps, which it does not support): count, with a heart rate, first and last timestamps
    (raw FIT seconds: such old files may count from the device's start, not the FIT epoch)."""
    import fitparse
    records = [m.get_values() for m in fitparse.FitFile(path).get_messages("record")]
    stamps = [r["timestamp"] for r in records if r.get("timestamp") is not None]
    raw = [int(t.timestamp()) - FIT_EPOCH if hasattr(t, "timestamp") else int(t) for t in stamps]
    return {"decoder": "python-fitparse", "records": len(records),
            "recordsWithHeartRate": len([r for r in records if r.get("heart_rate") is not None]),
            "firstRecordRaw": raw[0] if raw else None, "lastRecordRaw": raw[-1] if raw else None}


def main():
    result = {"decoder": "garmin-fit-sdk (Python), Garmin's FIT SDK", "files": {}}
    for directory in sys.argv[1:]:
        for name in sorted(os.listdir(directory)):
            if name.lower().endswith(".fit"):
                try:
                    result["files"][name] = figures(os.path.join(directory, name))
                    if any("Compressed timestamp" in e for e in result["files"][name]["errors"]):
                        result["files"][name]["fitparse"] = fitparse_records(os.path.join(directory, name))
                except Exception as error:  # a file the SDK cannot read at all
                    result["files"][name] = {"errors": [f"{type(error).__name__}: {error}"]}
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
