//! English for the Chinese words tool authors write most, so that a request in English reaches
//! a tool described in Chinese (and a request in Chinese reaches a tool described in English).
//! Like `synonyms`, it is general vocabulary of tools and of what people ask them for (fetching,
//! files, news, rankings, maps, money), not a list fitted to any server or benchmark: a word
//! belongs here when its English is what a person would type for it. Chinese has no spaces, so
//! a word is found wherever it stands in a run of characters; the characters themselves are
//! indexed as overlapping pairs (`text::words`), which is how Chinese meets Chinese.

/// Chinese words and the English a request would use for them.
const WORDS: &[(&str, &str)] = &[
    // what a tool does
    ("获取", "get fetch"),
    ("查询", "query search look up"),
    ("搜索", "search"),
    ("检索", "search retrieve"),
    ("查找", "find search"),
    ("查看", "view show"),
    ("列出", "list"),
    ("列表", "list"),
    ("创建", "create"),
    ("新建", "create new"),
    ("添加", "add"),
    ("删除", "delete remove"),
    ("移除", "remove"),
    ("修改", "modify edit update"),
    ("编辑", "edit"),
    ("更新", "update"),
    ("读取", "read"),
    ("写入", "write"),
    ("保存", "save"),
    ("上传", "upload"),
    ("下载", "download"),
    ("发送", "send"),
    ("发布", "publish post"),
    ("生成", "generate create"),
    ("转换", "convert"),
    ("翻译", "translate translation"),
    ("分析", "analyze analysis"),
    ("统计", "statistics count"),
    ("计算", "calculate compute"),
    ("推荐", "recommend recommendation"),
    ("评测", "review"),
    ("评论", "comment review"),
    ("评分", "rating score"),
    ("监控", "monitor"),
    ("运行", "run execute"),
    ("执行", "execute run"),
    ("安装", "install"),
    ("登录", "login sign in"),
    ("订阅", "subscribe subscription"),
    ("预订", "book reserve"),
    ("支付", "pay payment"),
    ("导航", "navigate navigation"),
    ("截图", "screenshot"),
    ("识别", "recognize detect"),
    ("总结", "summarize summary"),
    ("摘要", "summary abstract"),
    // lists and what is popular
    ("热榜", "trending hot list ranking"),
    ("热搜", "trending hot search"),
    ("热点", "trending hot topics"),
    ("热门", "popular trending hot"),
    ("排行榜", "ranking leaderboard chart"),
    ("排行", "ranking"),
    ("排名", "ranking rank"),
    ("榜单", "ranking list chart"),
    ("趋势", "trend trends"),
    ("实时", "realtime live"),
    ("最新", "latest newest"),
    ("话题", "topic topics"),
    // news and media
    ("新闻", "news"),
    ("资讯", "news information"),
    ("快讯", "news flash"),
    ("头条", "headlines top news"),
    ("要闻", "headlines news"),
    ("时事", "current affairs news"),
    ("报道", "report coverage"),
    ("文章", "article articles"),
    ("博客", "blog"),
    ("视频", "video videos"),
    ("直播", "live stream"),
    ("音乐", "music"),
    ("歌曲", "song music"),
    ("电影", "movie film"),
    ("电视剧", "tv series drama"),
    ("综艺", "variety show"),
    ("动画", "animation anime"),
    ("游戏", "game games gaming"),
    ("娱乐", "entertainment"),
    ("明星", "celebrity"),
    ("体育", "sports"),
    ("赛事", "sports events match"),
    ("图书", "book books"),
    ("书籍", "book books"),
    ("小说", "novel fiction"),
    ("阅读", "reading read"),
    ("作品", "works"),
    ("问答", "questions answers q&a"),
    ("讨论", "discussion"),
    ("社交", "social"),
    ("社区", "community"),
    ("图片", "image picture"),
    ("照片", "photo"),
    ("图像", "image"),
    ("音频", "audio"),
    ("语音", "voice speech"),
    // domains
    ("科技", "technology tech"),
    ("技术", "technology technical tech"),
    ("数码", "digital gadgets electronics"),
    ("电子", "electronic electronics"),
    ("产品", "product products"),
    ("商品", "product goods"),
    ("购物", "shopping"),
    ("优惠", "deal deals discount"),
    ("折扣", "discount"),
    ("价格", "price"),
    ("消费", "consumer consumption"),
    ("商业", "business"),
    ("财经", "finance financial economy"),
    ("金融", "finance financial"),
    ("经济", "economy economic"),
    ("股票", "stock stocks"),
    ("股市", "stock market"),
    ("基金", "fund"),
    ("投资", "investment invest"),
    ("融资", "funding financing"),
    ("创业", "startup"),
    ("公司", "company"),
    ("企业", "enterprise company"),
    ("政治", "politics"),
    ("国际", "international world"),
    ("社会", "society social"),
    ("健康", "health"),
    ("医疗", "medical health"),
    ("教育", "education"),
    ("文化", "culture"),
    ("艺术", "art"),
    ("科学", "science"),
    ("人工智能", "ai artificial intelligence"),
    ("软件", "software"),
    ("开发", "development developer"),
    ("开发者", "developer"),
    ("编程", "programming coding"),
    ("代码", "code"),
    ("前端", "frontend"),
    ("后端", "backend"),
    ("架构", "architecture"),
    ("云计算", "cloud computing"),
    ("互联网", "internet"),
    ("网络", "network internet"),
    ("手机", "phone mobile"),
    ("苹果", "apple"),
    ("天气", "weather forecast"),
    ("预报", "forecast"),
    ("地图", "map maps"),
    ("地址", "address"),
    ("位置", "location"),
    ("路线", "route directions"),
    ("交通", "traffic transport"),
    ("旅游", "travel"),
    ("酒店", "hotel"),
    ("航班", "flight"),
    ("火车", "train"),
    ("美食", "food"),
    ("餐厅", "restaurant"),
    ("招聘", "jobs hiring"),
    ("职位", "job position"),
    ("法律", "law legal"),
    ("专利", "patent"),
    ("论文", "paper papers research"),
    ("学术", "academic"),
    // things tools handle
    ("文件", "file files"),
    ("文件夹", "folder directory"),
    ("目录", "directory folder"),
    ("文档", "document docs"),
    ("表格", "table spreadsheet"),
    ("数据库", "database"),
    ("数据", "data"),
    ("信息", "information info"),
    ("详情", "details"),
    ("内容", "content"),
    ("用户", "user users"),
    ("账号", "account"),
    ("账户", "account"),
    ("邮件", "email mail"),
    ("邮箱", "email mailbox"),
    ("消息", "message messages"),
    ("通知", "notification notify"),
    ("日历", "calendar"),
    ("日程", "schedule calendar"),
    ("会议", "meeting"),
    ("任务", "task tasks"),
    ("笔记", "note notes"),
    ("链接", "link url"),
    ("网页", "web page webpage"),
    ("网站", "website site"),
    ("浏览器", "browser"),
    ("仓库", "repository repo"),
    ("项目", "project"),
    ("时间", "time"),
    ("日期", "date"),
    ("当前", "current"),
    ("今日", "today"),
    ("今天", "today"),
    ("汇率", "exchange rate currency"),
    ("货币", "currency"),
    ("密码", "password"),
    ("二维码", "qr code"),
    ("订单", "order orders"),
    ("快递", "package delivery shipping"),
];

/// Whether `c` is written without spaces between words: Chinese characters and Japanese kana
/// (Korean is written with spaces, and splits as other words do).
pub(super) fn is_unspaced(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF     // hiragana, katakana
        | 0x3400..=0x4DBF   // CJK extension A
        | 0x4E00..=0x9FFF   // CJK unified ideographs
        | 0xF900..=0xFAFF   // CJK compatibility ideographs
        | 0x20000..=0x2FFFF // CJK extensions B onwards
    )
}

/// The English of the Chinese words in `text`, in the order of the table; empty when `text`
/// has no character written without spaces (the common case, decided without a search).
pub(super) fn english(text: &str) -> String {
    let mut out = String::new();
    if !text.chars().any(is_unspaced) {
        return out;
    }
    for (chinese, english) in WORDS {
        if text.contains(chinese) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(english);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_each_word_once() {
        let mut seen = std::collections::HashSet::new();
        for (chinese, english) in WORDS {
            assert!(seen.insert(*chinese), "{chinese} twice");
            assert!(chinese.chars().all(is_unspaced), "{chinese}");
            assert!(
                !english.is_empty() && english.is_ascii(),
                "{chinese}: {english}"
            );
        }
    }

    #[test]
    fn chinese_words_are_read_in_english_wherever_they_stand() {
        let e = english("获取微博热搜榜，包含时事热点");
        for w in ["get", "trending", "news"] {
            assert!(e.split(' ').any(|x| x == w), "{w} in {e}");
        }
        assert_eq!(english("Get trending repositories"), "");
        assert_eq!(english(""), "");
        // Kana without a Chinese word of the table says nothing, and nothing panics.
        assert_eq!(english("ファイルを読む"), "");
    }

    proptest::proptest! {
        #[test]
        fn any_text_is_read_without_panicking(text in "\\PC*") {
            let e = english(&text);
            proptest::prop_assert!(e.is_ascii());
        }
    }
}
